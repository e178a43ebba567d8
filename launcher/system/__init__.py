"""The Pi as a system: systemd's notify and watchdog, power warnings, switching off, backups, the state directory's
lock, the page's addresses and their QR codes."""
