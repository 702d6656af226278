"""Ready-made kheaders interceptors, named in config or passed as objects."""
