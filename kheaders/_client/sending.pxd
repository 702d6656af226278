# Cython declarations for sending.py (the compiled core, pure-Python mode): the sender's and
# the header gate's fields as C fields (a slot read is a struct read, not an attribute
# lookup). Without the compiled core the .py runs as it is, its __slots__ the same fields.

cdef class OutgoingHeaders:
    cdef public object limits
    cdef public tuple _memo

cdef class Sender:
    cdef public object ack
    cdef public object beneath
    cdef public object chain
    cdef public OutgoingHeaders gate
    cdef public object hand
    cdef public object key_ser
    cdef public object parked
    cdef public object reporter
    cdef public bint sees_records
    cdef public object send
    cdef public object value_ser
