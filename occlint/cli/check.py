"""``occlint check PATH...`` (the default command): placeholder until the readers land."""
