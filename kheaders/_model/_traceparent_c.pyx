# cython: language_level=3
"""The C twin of kheaders/_model/_traceparent_py.py (read that module for the contract):
the same functions, the same results, chosen by kheaders/_speedups.py where the build
compiled this file."""

cdef extern from *:
    """
    static int kheaders_valid55(PyObject *value)
    {
        const unsigned char *s;
        unsigned int c;
        int i, trace = 0, span = 0;
        if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) != 55) {
            return 0;
        }
        s = (const unsigned char *)PyBytes_AS_STRING(value);
        for (i = 0; i < 55; i++) {
            c = s[i];
            if (i == 2 || i == 35 || i == 52) {
                if (c != '-') {
                    return 0;
                }
            } else if (!(c - 0x30u < 10u || c - 0x61u < 6u)) {  /* 0-9, a-f */
                return 0;
            } else if (c != '0') {
                trace |= i > 2 && i < 35;
                span |= i > 35 && i < 52;
            }
        }
        return !(s[0] == 'f' && s[1] == 'f') && trace && span;
    }
    """
    bint _valid55 "kheaders_valid55"(object value)


def valid55(value):
    return _valid55(value)


def lone_value(headers, key):
    if not isinstance(headers, list):  # as list.__iter__(headers) refuses it
        raise TypeError(
            "descriptor '__iter__' for 'list' objects doesn't apply to a"
            f" '{type(headers).__name__}' object"
        )
    cdef list items = <list>headers  # the stored pairs, whatever a subclass iterates as
    found = None
    seen = False
    for k, value in items:
        if k == key:
            if seen:
                return None
            seen = True
            found = value
    return found
