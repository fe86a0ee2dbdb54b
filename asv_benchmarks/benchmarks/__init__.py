"""asv benchmarks for frozenmap (see ../asv.conf.json)."""
