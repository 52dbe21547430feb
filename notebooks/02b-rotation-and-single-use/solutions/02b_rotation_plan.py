from mrtr_kit.server.keyring import KeyRing, StateKey


def rotation_plan(current: KeyRing, new: StateKey) -> list[KeyRing]:
    """The rings every instance goes through, in order, to replace current's key by new."""
    added = current.add(new)  # 1. every instance can open new-key states; none seals yet
    promoted = added.promote(new.kid)  # 2. the new key seals; the old one still opens
    retired = promoted.retire(current.primary.kid)  # 3. after one state lifetime: old key gone
    return [added, promoted, retired]
