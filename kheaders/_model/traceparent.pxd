# Cython declarations for traceparent.py (the compiled core, pure-Python mode): _text becomes
# a C function, parse_traceparent is called in C by extract_trace_parent (still a Python
# function too), and _parse55 and _lone_value are the C below. Without the compiled core the
# .py runs as it is.
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

# _lone_value in C: what traceparent.py defines under "if not cython.compiled" (its reference:
# the same walk over the list, the same early return, the same errors: a pair that is not a
# tuple is unpacked by iteration with the interpreter's messages of Python 3.11 to 3.13).
cdef extern from *:
    """
    static int kheaders_unpack2(PyObject *item, PyObject **k, PyObject **v)
    {
        PyObject *it = PyObject_GetIter(item);
        PyObject *extra;
        if (it == NULL) {
            if (PyErr_ExceptionMatches(PyExc_TypeError) && Py_TYPE(item)->tp_iter == NULL
                && !PySequence_Check(item)) {
                PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object",
                             Py_TYPE(item)->tp_name);
            }
            return -1;
        }
        *k = PyIter_Next(it);
        if (*k == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError,
                                "not enough values to unpack (expected 2, got 0)");
            }
            Py_DECREF(it);
            return -1;
        }
        *v = PyIter_Next(it);
        if (*v == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError,
                                "not enough values to unpack (expected 2, got 1)");
            }
            Py_DECREF(*k);
            Py_DECREF(it);
            return -1;
        }
        extra = PyIter_Next(it);
        Py_DECREF(it);
        if (extra != NULL || PyErr_Occurred()) {
            if (extra != NULL) {
                Py_DECREF(extra);
                PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
            }
            Py_DECREF(*k);
            Py_DECREF(*v);
            return -1;
        }
        return 0;
    }

    static int kheaders_same_key(PyObject *k, PyObject *key)
    {
        PyObject *eq;
        int result;
        if (k == key) {
            return 1;
        }
        if (PyUnicode_CheckExact(k) && PyUnicode_CheckExact(key)
    #if PY_VERSION_HEX < 0x030C0000
            && PyUnicode_IS_READY(k) && PyUnicode_IS_READY(key)  /* no legacy string */
    #endif
            ) {
            Py_ssize_t n = PyUnicode_GET_LENGTH(k);
            return n == PyUnicode_GET_LENGTH(key) && PyUnicode_KIND(k) == PyUnicode_KIND(key)
                && memcmp(PyUnicode_DATA(k), PyUnicode_DATA(key), n * PyUnicode_KIND(k)) == 0;
        }
        eq = PyObject_RichCompare(k, key, Py_EQ);
        if (eq == NULL) {
            return -1;
        }
        result = PyObject_IsTrue(eq);
        Py_DECREF(eq);
        return result;
    }

    static PyObject *kheaders_lone_value(PyObject *headers, PyObject *key)
    {
        PyObject *found = Py_None;
        int seen = 0;
        Py_ssize_t i;
        if (!PyList_Check(headers)) {
            PyErr_Format(PyExc_TypeError,
                         "descriptor '__iter__' requires a 'list' object but received a"
                         " '%.100s'", Py_TYPE(headers)->tp_name);
            return NULL;
        }
        Py_INCREF(found);
        for (i = 0; i < PyList_GET_SIZE(headers); i++) {  /* as a list iterator: size re-read */
            PyObject *item = PyList_GET_ITEM(headers, i);
            PyObject *k, *v;
            int same;
            if (PyTuple_Check(item) && Py_TYPE(item)->tp_iter == PyTuple_Type.tp_iter
                && PyTuple_GET_SIZE(item) == 2) {
                k = PyTuple_GET_ITEM(item, 0);
                v = PyTuple_GET_ITEM(item, 1);
                Py_INCREF(k);
                Py_INCREF(v);
            } else {
                int unpacked;
                Py_INCREF(item);
                unpacked = kheaders_unpack2(item, &k, &v);
                Py_DECREF(item);
                if (unpacked < 0) {
                    Py_DECREF(found);
                    return NULL;
                }
            }
            same = kheaders_same_key(k, key);
            Py_DECREF(k);
            if (same < 0) {
                Py_DECREF(v);
                Py_DECREF(found);
                return NULL;
            }
            if (!same) {
                Py_DECREF(v);
                continue;
            }
            if (seen) {
                Py_DECREF(v);
                Py_DECREF(found);
                Py_RETURN_NONE;
            }
            seen = 1;
            Py_DECREF(found);
            found = v;
        }
        return found;
    }
    """
    object _lone_value "kheaders_lone_value"(object headers, object key)

cpdef object parse_traceparent(object value)
