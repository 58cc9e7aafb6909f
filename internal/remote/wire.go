package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// method names a call: the first 8 bytes of every request. The ids are generated
// (methods_gen.go).
type method uint64

// enc builds a request or a response: fixed-size little-endian scalars, and byte strings
// prefixed with their length. Every scalar crosses as 8 bytes, so no method needs a layout of
// its own and a handle or a pointer crosses unchanged.
type enc struct {
	b   []byte
	box *[]byte // where b came from in the request pool, if it did
}

func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) bool(v bool) {
	if v {
		e.u64(1)
		return
	}
	e.u64(0)
}
func (e *enc) bytes(p []byte) { e.u64(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) str(s string)   { e.u64(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) f32(v float32)  { e.u64(uint64(math.Float32bits(v))) }

// errShort is a message that ended before its fields did: the two sides disagree on a
// method's layout, which is a bug, never the user's error.
var errShort = errors.New("remote: message shorter than its method's fields")

// dec reads what enc wrote; a read past the end sets err and yields zeros, so a handler reads
// all its fields and checks once.
type dec struct {
	b   []byte
	err error
}

func (d *dec) u64() uint64 {
	if len(d.b) < 8 {
		d.err = errShort
		d.b = nil
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) i64() int64  { return int64(d.u64()) }
func (d *dec) int() int    { return int(d.i64()) }
func (d *dec) u32() uint32 { return uint32(d.u64()) }
func (d *dec) bool() bool  { return d.u64() != 0 }

// bytes returns a view into the message, valid while the message is.
func (d *dec) bytes() []byte {
	n := d.u64()
	if n > uint64(len(d.b)) {
		if d.err == nil {
			d.err = fmt.Errorf("%w: a %d-byte field with %d bytes left", errShort, n, len(d.b))
		}
		d.b = nil
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}
func (d *dec) str() string { return string(d.bytes()) }

// count reads a count of fields of size bytes each, refusing one larger than what is left.
func (d *dec) count(size int) int {
	n := d.u64()
	if n > uint64(len(d.b)/size) {
		if d.err == nil {
			d.err = fmt.Errorf("%w: %d fields of %d bytes with %d bytes left", errShort, n, size, len(d.b))
		}
		d.b = nil
		return 0
	}
	return int(n)
}

func (d *dec) f32() float32 { return math.Float32frombits(uint32(d.u64())) }

// clone reads a byte string into memory of its own, as the message's is reused.
func (d *dec) clone() []byte {
	p := d.bytes()
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// fixed reads len(p) bytes into p: a fixed-size array, which crosses without a length.
func (d *dec) fixed(p []byte) {
	if len(d.b) < len(p) {
		d.err = errShort
		d.b = nil
		return
	}
	copy(p, d.b)
	d.b = d.b[len(p):]
}

// inline reads the error a method answers with its results (the worker's inline): nil, the
// error, or the message's own error when it ended early.
func (d *dec) inline() error {
	code, msg := d.i64(), d.str()
	if d.err != nil {
		return d.err
	}
	if code != 0 {
		return Codec{}.Decode(code, msg)
	}
	return nil
}
