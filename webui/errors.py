"""Errors as the API answers them: `{"error": {"code": ..., "message": ...}}` with a 4xx status.

Nothing a client sends yields a 500; a bug inside does, with the same shape and nothing of the inside shown. A
store that cannot take a change (a full or read-only disk) is 507 with the disk's refusal code: nothing was kept.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from launcher.access.bodies import BodyError
from launcher.errors import LauncherError
from launcher.refusals import Refusal
from launcher.store import StoreError


class ApiError(LauncherError):
    """An error the client caused, with the HTTP status it maps to."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details  # more fields of the error object, for the page (e.g. tries_left)


def error_response(status: int, code: str, message: str, **details: Any) -> tuple[Response, int]:
    return jsonify(error={"code": code, "message": message, **details}), status


def register_errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    @app.errorhandler(BodyError)  # a request body refused by launcher/access/bodies.py: the same shape
    def _api_error(e: ApiError | BodyError) -> tuple[Response, int]:
        response, status = error_response(e.status, e.code, e.message, **e.details)
        if "retry_after_s" in e.details:
            response.headers["Retry-After"] = str(e.details["retry_after_s"])
        return response, status

    @app.errorhandler(StoreError)  # a full or read-only disk during play: the change asked for was not kept
    def _store_error(e: StoreError) -> tuple[Response, int]:
        app.logger.error("a change was refused: %s", e)
        return error_response(507, (e.trouble or Refusal.STORE_FAILED).value, str(e))

    @app.errorhandler(HTTPException)
    def _http_error(e: HTTPException) -> tuple[Response, int]:
        code = (e.name or "error").lower().replace(" ", "_")
        return error_response(e.code or 500, code, e.description or e.name)

    @app.errorhandler(Exception)
    def _unexpected(e: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error")
        return error_response(500, "internal", "something went wrong inside the launcher; see its log")
