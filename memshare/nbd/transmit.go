package nbd

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// request is one parsed transmission request.
type request struct {
	flags  uint16
	typ    uint16
	cookie uint64
	offset uint64
	length uint32
	data   []byte // WRITE payload
}

// parseRequest decodes a 28-byte request header. Bad magic is fatal.
func parseRequest(h []byte) (request, error) {
	if len(h) != requestLen {
		return request{}, fmt.Errorf("request header of %d bytes", len(h))
	}
	if m := binary.BigEndian.Uint32(h); m != requestMagic {
		return request{}, fmt.Errorf("request magic %#x is not %#x", m, requestMagic)
	}
	return request{
		flags:  binary.BigEndian.Uint16(h[4:]),
		typ:    binary.BigEndian.Uint16(h[6:]),
		cookie: binary.BigEndian.Uint64(h[8:]),
		offset: binary.BigEndian.Uint64(h[16:]),
		length: binary.BigEndian.Uint32(h[24:]),
	}, nil
}

// check validates a request against the export and returns the errno to
// reply with (0: go ahead) and a message for structured error replies.
func check(r request, size uint64) (uint32, string) {
	if r.flags&^knownCmdFlags != 0 {
		return EINVAL, fmt.Sprintf("unknown command flags %#x", r.flags)
	}
	switch r.typ {
	case cmdRead, cmdWrite, cmdTrim:
	case cmdFlush:
		return 0, ""
	default:
		return EINVAL, fmt.Sprintf("unknown command %d", r.typ)
	}
	if r.typ == cmdRead && r.length > MaxPayload {
		return EOVERFLOW, fmt.Sprintf("read of %d bytes exceeds the maximum payload %d", r.length, MaxPayload)
	}
	end := r.offset + uint64(r.length)
	if end < r.offset || end > size {
		if r.typ == cmdWrite {
			return ENOSPC, fmt.Sprintf("write at %d+%d is beyond the export size %d", r.offset, r.length, size)
		}
		return EINVAL, fmt.Sprintf("request at %d+%d is beyond the export size %d", r.offset, r.length, size)
	}
	return 0, ""
}

// transmit serves requests until the client disconnects or breaks the
// protocol. Requests run concurrently (up to MaxInFlight); replies are
// written whole under a lock.
func (s *session) transmit() error {
	_ = s.conn.SetDeadline(time.Time{})
	inline := s.srv.cfg.Inline
	w := &replyWriter{bw: bufio.NewWriterSize(s.conn, 64<<10), structured: s.structured, deferred: inline}
	var src io.Reader = s.conn
	if inline {
		// Replies wait in the buffer until the reader has nothing queued:
		// a burst of pipelined requests costs one send, not one each.
		src = flushReader{r: s.conn, w: w}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	sem := make(chan struct{}, s.srv.cfg.MaxInFlight)
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		w.mu.Lock()
		_ = w.flush()
		w.mu.Unlock()
	}()
	size := s.export.Size()
	var h [requestLen]byte
	var scratch []byte // inline mode: one payload buffer, reused
	be, _ := s.export.(BatchExport)
	var batch []request // pipelined requests already received, served together
	dispatch := func() {
		switch rs := batch; len(rs) {
		case 0:
		case 1:
			wg.Add(1)
			go func() { defer func() { <-sem; wg.Done() }(); s.serve(w, rs[0]) }()
		default:
			wg.Add(1)
			go func() {
				defer func() {
					for range rs {
						<-sem
					}
					wg.Done()
				}()
				s.serveBatch(w, be, rs)
			}()
		}
		batch = nil
	}
	defer dispatch()
	for {
		if br.Buffered() < requestLen {
			dispatch() // never hold a batch while waiting on the client
		}
		if _, err := io.ReadFull(br, h[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		r, err := parseRequest(h[:])
		if err != nil {
			return err
		}
		if r.typ == cmdDisc {
			return nil
		}
		if r.typ == cmdWrite {
			if r.length > MaxPayload {
				return fmt.Errorf("write of %d bytes exceeds the maximum payload %d", r.length, MaxPayload)
			}
			r.data = payload(&scratch, r.length, inline)
			if _, err := io.ReadFull(br, r.data); err != nil {
				return err
			}
		}
		if errno, msg := check(r, size); errno != 0 {
			if err := w.fail(r, errno, msg); err != nil {
				return err
			}
			continue
		}
		if inline {
			if r.typ == cmdRead {
				r.data = payload(&scratch, r.length, true)
			}
			s.serve(w, r)
			continue
		}
		if be != nil && batchable(r) {
			// Gather while the next request is already here (the loop's
			// top dispatches when it is not).
			sem <- struct{}{}
			batch = append(batch, r)
			if len(batch) == maxBatch {
				dispatch()
			}
			continue
		}
		dispatch()
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.serve(w, r)
		}()
	}
}

// serve runs one validated request against the export and replies.
func (s *session) serve(w *replyWriter, r request) {
	start := time.Now()
	var data []byte
	var err error
	switch r.typ {
	case cmdRead:
		data = r.data
		if data == nil {
			data = make([]byte, r.length)
		}
		err = s.export.ReadAt(data, r.offset)
	case cmdWrite:
		err = s.export.WriteAt(r.data, r.offset, r.flags&cmdFlagFUA != 0)
	case cmdFlush:
		err = s.export.Flush()
	case cmdTrim:
		err = s.export.Trim(r.offset, r.length)
	}
	s.srv.cfg.Metrics.observe(r.typ, r.length, start, err)
	if err != nil {
		errno, msg := errnoOf(err)
		_ = w.fail(r, errno, msg)
		return
	}
	_ = w.ok(r, data)
}

// errnoOf maps an export's error to a protocol errno (EIO unless it is
// an *Error) and a message.
func errnoOf(err error) (uint32, string) {
	var ne *Error
	if errors.As(err, &ne) {
		return ne.Errno, err.Error()
	}
	return EIO, err.Error()
}

// payload returns an n-byte buffer: a fresh one, or (reuse) the session's
// scratch buffer, which inline serving is done with before the next read.
func payload(scratch *[]byte, n uint32, reuse bool) []byte {
	if !reuse {
		return make([]byte, n)
	}
	if uint32(cap(*scratch)) < n {
		*scratch = make([]byte, n)
	}
	return (*scratch)[:n]
}

// replyWriter serialises replies on the connection. Sends are grouped:
// a reply is flushed by the last of the writers queued at that moment
// (or, deferred, by flushReader before the connection is read again).
type replyWriter struct {
	mu         sync.Mutex
	bw         *bufio.Writer
	structured bool
	deferred   bool
	queued     atomic.Int32
	err        error
	scratch    [20]byte // header scratch, under mu
}

// flushReader sends the buffered replies before blocking on the client.
type flushReader struct {
	r io.Reader
	w *replyWriter
}

func (f flushReader) Read(p []byte) (int, error) {
	f.w.mu.Lock()
	err := f.w.flush()
	f.w.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

// lock queues a reply; done flushes when no other reply is queued.
func (w *replyWriter) lock() {
	w.queued.Add(1)
	w.mu.Lock()
}

func (w *replyWriter) done() error {
	defer w.mu.Unlock()
	if w.queued.Add(-1) == 0 && !w.deferred {
		return w.flush()
	}
	return w.err
}

func (w *replyWriter) ok(r request, data []byte) error {
	w.lock()
	w.okBody(r, data)
	return w.done()
}

func (w *replyWriter) fail(r request, errno uint32, msg string) error {
	w.lock()
	w.failBody(r, errno, msg)
	return w.done()
}

func (w *replyWriter) okBody(r request, data []byte) {
	if r.typ == cmdRead && w.structured {
		w.chunkHeader(r.cookie, replyOffsetData, uint32(8+len(data)))
		w.put64(r.offset)
	} else {
		w.simpleHeader(r.cookie, 0)
	}
	if r.typ == cmdRead {
		w.write(data)
	}
}

func (w *replyWriter) failBody(r request, errno uint32, msg string) {
	if !w.structured {
		w.simpleHeader(r.cookie, errno)
		return
	}
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	w.chunkHeader(r.cookie, replyError, uint32(6+len(msg)))
	b := w.scratch[:6]
	binary.BigEndian.PutUint32(b, errno)
	binary.BigEndian.PutUint16(b[4:], uint16(len(msg)))
	w.write(b)
	w.write([]byte(msg))
}

func (w *replyWriter) simpleHeader(cookie uint64, errno uint32) {
	b := w.scratch[:16]
	binary.BigEndian.PutUint32(b[0:], simpleMagic)
	binary.BigEndian.PutUint32(b[4:], errno)
	binary.BigEndian.PutUint64(b[8:], cookie)
	w.write(b)
}

func (w *replyWriter) chunkHeader(cookie uint64, typ uint16, n uint32) {
	b := w.scratch[:20]
	binary.BigEndian.PutUint32(b[0:], structuredMagic)
	binary.BigEndian.PutUint16(b[4:], replyFlagDone)
	binary.BigEndian.PutUint16(b[6:], typ)
	binary.BigEndian.PutUint64(b[8:], cookie)
	binary.BigEndian.PutUint32(b[16:], n)
	w.write(b)
}

func (w *replyWriter) put64(v uint64) {
	b := w.scratch[:8]
	binary.BigEndian.PutUint64(b, v)
	w.write(b)
}

func (w *replyWriter) write(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

func (w *replyWriter) flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}
