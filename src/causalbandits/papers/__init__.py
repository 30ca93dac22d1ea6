"""One module per paper: its environments, experiments as presets, and reported claims."""
