package aggsvc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// sendQueue bounds the frames waiting for one slow reader; a reader that
// falls further behind is disconnected rather than holding memory.
const sendQueue = 4096

type outFrame struct {
	typ   byte
	parts [][]byte
}

// conn is one authenticated worker (or admin) connection.
type conn struct {
	s    *Server
	nc   net.Conn
	out  chan outFrame
	done chan struct{}
	once sync.Once

	job  *job // set by hello
	rank uint32
}

func newConn(s *Server, nc net.Conn) *conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		// Best effort: latency and dead-peer detection, not correctness.
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlivePeriod(15 * time.Second)
	}
	return &conn{s: s, nc: nc, out: make(chan outFrame, sendQueue), done: make(chan struct{})}
}

// send queues a frame without blocking; a full queue drops the connection.
func (c *conn) send(typ byte, parts ...[]byte) {
	select {
	case <-c.done:
	case c.out <- outFrame{typ, parts}:
	default:
		c.s.log.Warn("dropping a connection that does not read its results", "remote", c.nc.RemoteAddr())
		c.close()
	}
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
	})
}

func (c *conn) writeLoop() {
	w := bufio.NewWriterSize(c.nc, 256<<10)
	for {
		select {
		case <-c.done:
			return
		case f := <-c.out:
			err := c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			if err == nil {
				err = writeFrame(w, f.typ, f.parts...)
			}
			if err != nil {
				c.close()
				return
			}
			if len(c.out) == 0 {
				if err := w.Flush(); err != nil {
					c.close()
					return
				}
			}
		}
	}
}

func (c *conn) readLoop() {
	defer c.s.connDone(c)
	defer c.close()
	r := bufio.NewReaderSize(c.nc, 256<<10)
	err := c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	if err == nil {
		err = c.serve(r)
	}
	if c.job != nil {
		why := "connection closed"
		if err != nil && !errors.Is(err, io.EOF) {
			why = err.Error()
		}
		c.s.detach(c.job, c.rank, why)
	}
}

// serve reads frames until the peer leaves or sends something invalid.
func (c *conn) serve(r io.Reader) error {
	authed := false
	for {
		f, err := readFrame(r, c.s.cfg.MaxFrameBytes)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return err
			}
			return c.reject("bad_frame", CodeBadRequest, err)
		}
		if !authed {
			if err := c.handshake(f); err != nil {
				return err
			}
			authed = true
			if err := c.nc.SetReadDeadline(time.Time{}); err != nil {
				return err
			}
			continue
		}
		if err := c.handle(f); err != nil {
			return err
		}
	}
}

// reject logs, counts and answers a bad frame, then ends the connection: a
// peer that sends garbage cannot be trusted to be in frame sync.
func (c *conn) reject(reason string, code uint16, err error) error {
	c.s.m.rejected.WithLabelValues(reason).Inc()
	c.s.log.Warn("rejected frame", "remote", c.nc.RemoteAddr(), "reason", reason, "error", err)
	c.send(frameError, errorMsg{Code: code, Message: err.Error()}.encode())
	c.flushAndClose()
	return err
}

// flushAndClose gives the writer a moment to deliver a final error frame.
func (c *conn) flushAndClose() {
	deadline := time.Now().Add(time.Second)
	for len(c.out) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	c.close()
}

func (c *conn) handshake(f frame) error {
	switch f.typ {
	case frameHello:
		return c.hello(f.body)
	case frameRegister:
		return c.adminRegister(f.body)
	}
	return c.reject("unauthenticated", CodeUnauthorized,
		fmt.Errorf("frame type %d before hello: every connection must authenticate first", f.typ))
}

func (c *conn) hello(body []byte) error {
	m, err := decodeHello(body)
	if err != nil {
		return c.reject("bad_hello", CodeBadRequest, err)
	}
	if !tokenOK(c.s.jobTk(m.Job), m.Token) {
		return c.reject("bad_token", CodeUnauthorized, fmt.Errorf("hello: field token: not valid for job %q", m.Job))
	}
	j, err := c.s.register(m.Job, int(m.Workers), int(m.Weight))
	if err != nil {
		return c.reject("conflict", CodeConflict, fmt.Errorf("hello: %w", err))
	}
	c.job, c.rank = j, m.Rank
	j.attach(m.Rank)
	c.send(frameOK)
	return nil
}

func (c *conn) adminRegister(body []byte) error {
	m, err := decodeRegister(body)
	if err != nil {
		return c.reject("bad_register", CodeBadRequest, err)
	}
	if !tokenOK(c.s.admin, m.AdminToken) {
		return c.reject("bad_token", CodeUnauthorized, errors.New("register: field admin_token: not valid"))
	}
	if _, err := c.s.register(m.Job, int(m.Workers), int(m.Weight)); err != nil {
		return c.reject("conflict", CodeConflict, fmt.Errorf("register: %w", err))
	}
	c.send(frameToken, []byte(c.s.jobTk(m.Job)))
	c.flushAndClose()
	return io.EOF
}

func (c *conn) handle(f frame) error {
	switch f.typ {
	case framePush:
		p, err := decodePush(f.body)
		if err != nil {
			return c.reject("bad_push", CodeBadRequest, err)
		}
		c.push(p)
		return nil
	case frameUnregister:
		if len(f.body) != 0 {
			return c.reject("bad_unregister", CodeBadRequest, errors.New("unregister: body must be empty"))
		}
		c.s.Unregister(c.job.name)
		c.send(frameOK)
		return nil
	}
	return c.reject("bad_type", CodeBadRequest, fmt.Errorf("frame type %d is not a request", f.typ))
}

func (c *conn) push(p pushMsg) {
	c.s.m.bytes.WithLabelValues("in").Add(float64(len(p.Data)))
	sl, e := c.s.admit(c.job, c, p)
	if e != nil {
		c.send(frameError, e.encode())
		return
	}
	j := c.job
	ok := c.s.sched.submit(j.q, float64(len(p.Data)), func() { c.s.fold(j, sl, p.Data) })
	if !ok {
		c.send(frameError, errorMsg{Code: CodeJobGone, Step: p.Step, Partition: p.Partition,
			Message: fmt.Sprintf("job %q was unregistered", j.name)}.encode())
	}
}
