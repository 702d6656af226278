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

    static unsigned PY_LONG_LONG kheaders_hex_run(const unsigned char *s, int n)
    {
        unsigned PY_LONG_LONG acc = 0;
        int i;
        for (i = 0; i < n; i++) {  /* checked hex: 0-9 or a-f */
            acc = acc << 4 | (s[i] <= '9' ? s[i] - 0x30u : s[i] - 0x57u);
        }
        return acc;
    }

    static PyObject *kheaders_fields55(PyObject *value)
    {
        const unsigned char *s;
        unsigned char id[16];
        unsigned PY_LONG_LONG high, low;
        int i;
        if (!kheaders_valid55(value)) {
            PyErr_SetString(PyExc_ValueError, "not a valid 55-byte traceparent");
            return NULL;
        }
        s = (const unsigned char *)PyBytes_AS_STRING(value);
        high = kheaders_hex_run(s + 3, 16);
        low = kheaders_hex_run(s + 19, 16);
        for (i = 0; i < 8; i++) {
            id[i] = (unsigned char)(high >> (56 - 8 * i));
            id[8 + i] = (unsigned char)(low >> (56 - 8 * i));
        }
        return Py_BuildValue(
            "(KNKK)",
            kheaders_hex_run(s, 2),
    #if PY_VERSION_HEX >= 0x030D0000
            PyLong_FromUnsignedNativeBytes(id, 16, Py_ASNATIVEBYTES_BIG_ENDIAN),
    #else
            _PyLong_FromByteArray(id, 16, 0, 0),
    #endif
            kheaders_hex_run(s + 36, 16),
            kheaders_hex_run(s + 53, 2));
    }
    """
    bint _valid55 "kheaders_valid55"(object value)
    object _fields55 "kheaders_fields55"(object value)


def valid55(value):
    return _valid55(value)


def fields55(value):
    return _fields55(value)


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
