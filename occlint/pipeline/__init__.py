"""The run as stages: collect inputs, read them, analyse and judge their subjects, apply
the baseline, assemble the document (occlint.pipeline.run)."""
