package aggsvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ProtocolVersion is the only frame version this build speaks.
const ProtocolVersion = 1

// headerSize is the fixed frame header: body length (uint32, big endian),
// version (uint8), type (uint8) and two reserved bytes that must be zero.
const headerSize = 8

// Frame types.
const (
	frameHello      byte = 1 // worker -> server: job, token, rank, workers, weight
	frameRegister   byte = 2 // admin -> server: admin token, job, workers, weight
	framePush       byte = 3 // worker -> server: one partition of one step
	frameUnregister byte = 4 // worker -> server: drop the job
	frameOK         byte = 10
	frameResult     byte = 11 // server -> worker: the reduced partition
	frameError      byte = 12
	frameToken      byte = 13 // server -> admin: the job token
)

// ErrFrameTooLarge is returned for a frame whose declared body exceeds the limit.
var ErrFrameTooLarge = errors.New("frame too large")

// frame is one decoded frame; body aliases the reader's buffer until the
// next read unless the caller keeps it.
type frame struct {
	typ  byte
	body []byte
}

// readFrame reads one frame, refusing bodies over max before allocating.
func readFrame(r io.Reader, max int) (frame, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[0:4])
	if h[4] != ProtocolVersion {
		return frame{}, fmt.Errorf("frame version %d: this server speaks version %d", h[4], ProtocolVersion)
	}
	if h[6] != 0 || h[7] != 0 {
		return frame{}, fmt.Errorf("frame reserved bytes must be zero, got %#x%02x", h[6], h[7])
	}
	if uint64(n) > uint64(max) {
		return frame{}, fmt.Errorf("%w: body of %d bytes, limit %d", ErrFrameTooLarge, n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return frame{}, fmt.Errorf("frame body (%d bytes): %w", n, err)
	}
	return frame{typ: h[5], body: body}, nil
}

// appendHeader appends a frame header for a body of n bytes.
func appendHeader(b []byte, typ byte, n int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, ProtocolVersion, typ, 0, 0)
}

// writeFrame writes header and body parts as one frame.
func writeFrame(w io.Writer, typ byte, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := appendHeader(make([]byte, 0, headerSize), typ, n)
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// decoder reads big-endian fields from a frame body and remembers the first
// failure, naming the field, so message decoders stay linear.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) need(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = fmt.Errorf("field %s: need %d bytes, %d left", field, n, len(d.b))
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8(field string) uint8 {
	if v := d.need(field, 1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u16(field string) uint16 {
	if v := d.need(field, 2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) u32(field string) uint32 {
	if v := d.need(field, 4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64(field string) uint64 {
	if v := d.need(field, 8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// bytes reads a uint16 length-prefixed byte string of at most max bytes.
func (d *decoder) bytes(field string, max int) []byte {
	n := int(d.u16(field + " length"))
	if d.err == nil && n > max {
		d.err = fmt.Errorf("field %s: %d bytes, limit %d", field, n, max)
		return nil
	}
	return d.need(field, n)
}

// done fails when bytes are left over: a frame must be exactly its message.
func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes after the message", len(d.b))
	}
	return d.err
}

type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *encoder) bytes(v []byte) {
	e.u16(uint16(len(v)))
	e.b = append(e.b, v...)
}
