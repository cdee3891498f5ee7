"""The lint pipeline: find files (:mod:`.files`), read settings (:mod:`.config`), run the
rules on each source (:mod:`.engine`), honour ``noqa`` comments (:mod:`.noqa`) and apply fixes
(:mod:`.fixer`)."""
