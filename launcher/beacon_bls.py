"""The BLS check of a drand quicknet round (launcher/beacon.py): e(signature, g2) = e(H(sha256(round)), public key)
on BLS12-381, with the Ethereum Foundation's py_ecc (pure Python: seconds per check, so `verify` only, never the
press path). The results are kept, as a record is often checked more than once in one process."""

from __future__ import annotations

import functools
import hashlib

from launcher.beacon import DST, PUBLIC_KEY


@functools.lru_cache(maxsize=64)
def signature_ok(number: int, signature: str) -> bool:
    """Whether `signature` (96 hex characters: a compressed G1 point) is quicknet's for round `number`."""
    # Imported here: only `verify` needs it, and it takes a moment to load.
    from py_ecc.bls.hash_to_curve import hash_to_G1
    from py_ecc.bls.point_compression import decompress_G1, decompress_G2
    from py_ecc.bls.typing import G1Compressed, G2Compressed
    from py_ecc.fields import optimized_bls12_381_FQ12 as FQ12
    from py_ecc.optimized_bls12_381.optimized_curve import G2, curve_order, is_inf, multiply, neg
    from py_ecc.optimized_bls12_381.optimized_pairing import final_exponentiate, miller_loop

    raw = bytes.fromhex(signature)
    try:
        point = decompress_G1(G1Compressed(int.from_bytes(raw, "big")))
    except ValueError:
        return False  # not a point of the curve
    if is_inf(point) or not is_inf(multiply(point, curve_order)):
        return False  # the point at infinity, or outside the group a signature lives in
    key = bytes.fromhex(PUBLIC_KEY)
    public = decompress_G2(G2Compressed((int.from_bytes(key[:48], "big"), int.from_bytes(key[48:], "big"))))
    # py_ecc types the hash as hashlib's internal HASH; hashlib.sha256 is that constructor.
    message = hash_to_G1(hashlib.sha256(number.to_bytes(8, "big")).digest(), DST, hashlib.sha256)  # type: ignore[arg-type]
    product = miller_loop(public, message) * miller_loop(neg(G2), point)
    return bool(final_exponentiate(product) == FQ12.one())
