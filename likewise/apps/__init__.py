"""Applications on a trained space beyond retail's (:mod:`likewise.retail`): campaigns in a typed space
(``campaigns``), what to read next (``content``), new products placed from their attributes
(``coldstart``) and the seed demo (``demo``). Modules are imported by their full name; this file imports
nothing."""
