"""The grammar IR: regular expressions over bytes (``regex``), Unicode code point sets as UTF-8
(``utf8``)."""
