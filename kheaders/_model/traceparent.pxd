# Cython declarations for traceparent.py (the compiled core, pure-Python mode): _text becomes
# a C function, parse_traceparent is called in C by extract_trace_parent (still a Python
# function too), and _parse55 is the C below. Without the compiled core the .py runs as it is.
import cython

cdef object _text(object value)

# _parse55 in C: what traceparent.py defines under "if not cython.compiled" (its reference:
# same contract, same results), without the cache (this parse costs about what a lookup
# does). The bytes are read once by position; the result is allocated by its type as
# tuple.__new__ does for a subclass (without the call's argument tuples), its trace id made
# from its 16 big-endian bytes in one step.
cdef extern from *:
    """
    static int kheaders_hex_run(const unsigned char *s, int n, unsigned PY_LONG_LONG *out)
    {
        unsigned PY_LONG_LONG acc = 0;
        int i;
        for (i = 0; i < n; i++) {
            unsigned int c = s[i];
            if (c - 0x30u < 10u) {          /* 0-9 */
                acc = acc << 4 | (c - 0x30u);
            } else if (c - 0x61u < 6u) {    /* a-f */
                acc = acc << 4 | (c - 0x57u);
            } else {
                return 0;
            }
        }
        *out = acc;
        return 1;
    }

    static PyObject *kheaders_parse55(PyObject *cls, PyObject *value)
    {
        const unsigned char *s;
        unsigned PY_LONG_LONG version, high, low, parent, flags;
        unsigned char id[16];
        PyObject *fields[4];
        PyObject *tp = NULL;
        int i;
        if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) != 55) {
            Py_RETURN_NONE;
        }
        s = (const unsigned char *)PyBytes_AS_STRING(value);
        if (s[2] != '-' || s[35] != '-' || s[52] != '-'
            || !kheaders_hex_run(s, 2, &version) || !kheaders_hex_run(s + 3, 16, &high)
            || !kheaders_hex_run(s + 19, 16, &low) || !kheaders_hex_run(s + 36, 16, &parent)
            || !kheaders_hex_run(s + 53, 2, &flags)
            || version == 0xFF || !(high | low) || !parent) {
            Py_RETURN_NONE;
        }
        for (i = 0; i < 8; i++) {
            id[i] = (unsigned char)(high >> (56 - 8 * i));
            id[8 + i] = (unsigned char)(low >> (56 - 8 * i));
        }
        fields[0] = PyLong_FromUnsignedLongLong(version);
    #if PY_VERSION_HEX >= 0x030D0000
        fields[1] = PyLong_FromUnsignedNativeBytes(id, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
    #else
        fields[1] = _PyLong_FromByteArray(id, 16, 0, 0);
    #endif
        fields[2] = PyLong_FromUnsignedLongLong(parent);
        fields[3] = PyLong_FromUnsignedLongLong(flags);
        if (fields[0] && fields[1] && fields[2] && fields[3]) {
            tp = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 4);
        }
        for (i = 0; i < 4; i++) {
            if (tp != NULL) {
                PyTuple_SET_ITEM(tp, i, fields[i]);  /* the reference moves to the tuple */
            } else {
                Py_XDECREF(fields[i]);
            }
        }
        return tp;
    }
    """
    object _parse55 "kheaders_parse55"(object cls, object value)

cpdef object parse_traceparent(object value)
