import sqlite3


def spend_once(db: sqlite3.Connection, jti: str) -> bool:
    """Record jti as spent; True only if this call recorded it (the first spend)."""
    # One statement checks and records: the primary key refuses a second row, atomically.
    cursor = db.execute("INSERT INTO spent (jti) VALUES (?) ON CONFLICT DO NOTHING", (jti,))
    db.commit()
    return cursor.rowcount == 1
