package nbd

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned for requests on a client whose connection ended.
var ErrClosed = errors.New("nbd: connection closed")

// ClientOptions configures Dial.
type ClientOptions struct {
	Export string
	// TLS, when set, upgrades with NBD_OPT_STARTTLS before choosing the export.
	TLS *tls.Config
	// Timeout bounds each request; a request past it closes the client
	// (default 10s): a donor that stops answering is treated as dead.
	Timeout time.Duration
}

// Client is a pipelined NBD client using simple replies. Its methods are
// safe for concurrent use.
type Client struct {
	conn    net.Conn
	size    uint64
	timeout time.Duration

	wmu    sync.Mutex
	bw     *bufio.Writer
	hdr    [requestLen]byte // request header scratch, under wmu
	queued atomic.Int32     // senders waiting for wmu: the last one flushes
	corked atomic.Int32     // Cork depth: sends wait in the buffer until Uncork

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*call
	err     error
	done    chan struct{}
}

type call struct {
	buf   []byte // read destination
	done  chan error
	sent  time.Time // for the watchdog
	group *Group    // when set, the result goes to err and the group counts it
	err   error
}

// calls recycles calls (and their channels): a request allocates nothing
// of its own once the pool is warm.
var calls = sync.Pool{New: func() any { return &call{done: make(chan error, 1)} }}

func newCall(buf []byte) *call {
	cl := calls.Get().(*call)
	cl.buf = buf
	return cl
}

// Dial connects, negotiates and selects opts.Export.
func Dial(ctx context.Context, network, addr string, opts ClientOptions) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c, err := NewClient(ctx, conn, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// NewClient negotiates over an open connection.
func NewClient(ctx context.Context, conn net.Conn, opts ClientOptions) (*Client, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	conn, size, err := clientHandshake(conn, opts)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	c := &Client{
		conn: conn, size: size, timeout: opts.Timeout,
		bw:      bufio.NewWriterSize(conn, 64<<10),
		pending: map[uint64]*call{},
		done:    make(chan struct{}),
	}
	go c.readLoop(bufio.NewReaderSize(conn, 64<<10))
	go c.watchdog()
	return c, nil
}

func clientHandshake(conn net.Conn, opts ClientOptions) (net.Conn, uint64, error) {
	var hello [18]byte
	if _, err := io.ReadFull(conn, hello[:]); err != nil {
		return nil, 0, fmt.Errorf("nbd hello: %w", err)
	}
	if binary.BigEndian.Uint64(hello[0:]) != nbdMagic || binary.BigEndian.Uint64(hello[8:]) != optMagic {
		return nil, 0, errors.New("nbd hello: not a fixed newstyle NBD server")
	}
	sflags := binary.BigEndian.Uint16(hello[16:])
	if sflags&flagFixedNew == 0 {
		return nil, 0, errors.New("nbd hello: server lacks fixed newstyle")
	}
	cflags := cflagFixedNew
	if sflags&flagNoZeroes != 0 {
		cflags |= cflagNoZeroes
	}
	if err := binary.Write(conn, binary.BigEndian, cflags); err != nil {
		return nil, 0, err
	}
	if opts.TLS != nil {
		if err := sendOption(conn, optStartTLS, nil); err != nil {
			return nil, 0, err
		}
		if _, _, err := readOptReply(conn, optStartTLS); err != nil {
			return nil, 0, fmt.Errorf("nbd STARTTLS: %w", err)
		}
		tc := tls.Client(conn, opts.TLS)
		if err := tc.Handshake(); err != nil {
			return nil, 0, fmt.Errorf("nbd TLS handshake: %w", err)
		}
		conn = tc
	}
	size, err := negotiateGo(conn, opts.Export)
	return conn, size, err
}

func negotiateGo(conn net.Conn, name string) (uint64, error) {
	data := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	data = append(data, name...)
	data = binary.BigEndian.AppendUint16(data, 0)
	if err := sendOption(conn, optGo, data); err != nil {
		return 0, err
	}
	var size uint64
	for {
		typ, payload, err := readOptReply(conn, optGo)
		if err != nil {
			return 0, fmt.Errorf("nbd GO: %w", err)
		}
		switch typ {
		case repAck:
			if size == 0 {
				return 0, errors.New("nbd GO: server sent no export size")
			}
			return size, nil
		case repInfo:
			if len(payload) >= 12 && binary.BigEndian.Uint16(payload) == infoExport {
				size = binary.BigEndian.Uint64(payload[2:])
			}
		}
	}
}

func sendOption(w io.Writer, opt uint32, data []byte) error {
	b := binary.BigEndian.AppendUint64(nil, optMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	_, err := w.Write(append(b, data...))
	return err
}

// readOptReply reads one option reply; error replies become errors
// carrying the server's message.
func readOptReply(r io.Reader, opt uint32) (uint32, []byte, error) {
	var h [20]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	if binary.BigEndian.Uint64(h[0:]) != optReplyMagic || binary.BigEndian.Uint32(h[8:]) != opt {
		return 0, nil, errors.New("malformed option reply")
	}
	typ, n := binary.BigEndian.Uint32(h[12:]), binary.BigEndian.Uint32(h[16:])
	if n > maxOptionLen {
		return 0, nil, fmt.Errorf("option reply of %d bytes", n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if typ&(1<<31) != 0 {
		return 0, nil, fmt.Errorf("server refused (%#x): %s", typ, payload)
	}
	return typ, payload, nil
}

// Size is the export's size in bytes.
func (c *Client) Size() uint64 { return c.size }

// ReadAt reads len(p) bytes at off.
func (c *Client) ReadAt(p []byte, off uint64) error { return c.do(cmdRead, 0, off, p) }

// WriteAt writes p at off.
func (c *Client) WriteAt(p []byte, off uint64) error { return c.do(cmdWrite, 0, off, p) }

// Flush asks the server to persist completed writes.
func (c *Client) Flush() error { return c.do(cmdFlush, 0, 0, nil) }

// Trim discards length bytes at off.
func (c *Client) Trim(off uint64, length uint32) error {
	return c.doLen(cmdTrim, off, length)
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close disconnects (NBD_CMD_DISC) and fails pending requests.
func (c *Client) Close() error {
	c.wmu.Lock()
	_ = c.writeHeader(cmdDisc, 0, 0, 0, 0)
	_ = c.bw.Flush()
	c.wmu.Unlock()
	c.fail(ErrClosed)
	return nil
}

func (c *Client) do(typ, flags uint16, off uint64, p []byte) error {
	return c.start(typ, flags, off, p, nil).Wait()
}

// Pending is a request sent and not yet answered.
type Pending struct {
	c   *Client
	cl  *call
	err error
}

// Wait returns the request's result (and, for a read, fills its buffer).
func (p *Pending) Wait() error {
	if p.err != nil {
		return p.err
	}
	if g := p.cl.group; g != nil {
		g.Wait()
		err := p.cl.err
		p.cl.group, p.cl.err, p.cl.buf = nil, nil, nil
		calls.Put(p.cl)
		return err
	}
	return p.c.wait(p.cl)
}

// ReadAtAsync sends a read and returns at once; p must not be touched
// until Wait returns. Several requests in flight on several clients cost
// one goroutine, not one each.
func (c *Client) ReadAtAsync(p []byte, off uint64) *Pending { return c.start(cmdRead, 0, off, p, nil) }

// WriteAtAsync sends a write and returns at once.
func (c *Client) WriteAtAsync(p []byte, off uint64) *Pending {
	return c.start(cmdWrite, 0, off, p, nil)
}

// ReadAtIn is ReadAtAsync as a member of g.
func (c *Client) ReadAtIn(g *Group, p []byte, off uint64) *Pending {
	return c.start(cmdRead, 0, off, p, g)
}

// WriteAtIn is WriteAtAsync as a member of g.
func (c *Client) WriteAtIn(g *Group, p []byte, off uint64) *Pending {
	return c.start(cmdWrite, 0, off, p, g)
}

func (c *Client) start(typ, flags uint16, off uint64, p []byte, g *Group) *Pending {
	if len(p) > MaxPayload {
		return &Pending{err: fmt.Errorf("nbd: request of %d bytes exceeds %d", len(p), MaxPayload)}
	}
	var dst []byte
	if typ == cmdRead {
		dst = p
	}
	cl := newCall(dst)
	if g != nil {
		cl.group = g
		g.left.Add(1)
	}
	cookie, err := c.register(cl)
	if err != nil {
		if g != nil {
			g.finishOne()
		}
		return &Pending{err: err}
	}
	c.lockSend()
	err = c.writeHeader(typ, flags, cookie, off, uint32(len(p)))
	if err == nil && typ == cmdWrite {
		_, err = c.bw.Write(p)
	}
	err = c.unlockSend(err)
	if err != nil {
		c.fail(fmt.Errorf("nbd: send: %w", err))
	}
	return &Pending{c: c, cl: cl}
}

func (c *Client) doLen(typ uint16, off uint64, length uint32) error {
	cl := newCall(nil)
	cookie, err := c.register(cl)
	if err != nil {
		return err
	}
	c.lockSend()
	err = c.writeHeader(typ, 0, cookie, off, length)
	err = c.unlockSend(err)
	if err != nil {
		c.fail(fmt.Errorf("nbd: send: %w", err))
	}
	return c.wait(cl)
}

// lockSend queues a request for the connection. Requests sent together
// by concurrent callers share one write: unlockSend flushes only when no
// other sender is queued behind it, and the last one flushes for all.
func (c *Client) lockSend() {
	c.queued.Add(1)
	c.wmu.Lock()
}

func (c *Client) unlockSend(err error) error {
	defer c.wmu.Unlock()
	if c.queued.Add(-1) == 0 && c.corked.Load() == 0 && err == nil {
		err = c.bw.Flush()
	}
	return err
}

// Cork holds requests in the send buffer (up to its 64 KiB) until the
// matching Uncork, so a caller issuing many requests sends them in one
// write. Every Cork must be followed by Uncork without waiting on a
// request sent in between.
func (c *Client) Cork() { c.corked.Add(1) }

// Uncork ends a Cork and sends what it held.
func (c *Client) Uncork() {
	if c.corked.Add(-1) != 0 {
		return
	}
	c.wmu.Lock()
	err := c.bw.Flush()
	c.wmu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("nbd: send: %w", err))
	}
}

// wait returns cl's result and recycles it. The watchdog bounds the wait.
func (c *Client) wait(cl *call) error {
	err := <-cl.done
	cl.buf = nil
	calls.Put(cl)
	return err
}

// watchdog closes the client when a request has had no reply within the
// timeout (a donor that stops answering is dead), checking a few times
// per timeout instead of arming a timer per request.
func (c *Client) watchdog() {
	t := time.NewTicker(max(c.timeout/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			if c.overdue(now) {
				c.fail(fmt.Errorf("nbd: no reply within %v", c.timeout))
				return
			}
		}
	}
}

func (c *Client) overdue(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.pending {
		if now.Sub(cl.sent) > c.timeout {
			return true
		}
	}
	return false
}

func (c *Client) register(cl *call) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	c.next++
	cl.sent = time.Now()
	c.pending[c.next] = cl
	return c.next, nil
}

func (c *Client) writeHeader(typ, flags uint16, cookie, off uint64, n uint32) error {
	h := c.hdr[:]
	binary.BigEndian.PutUint32(h[0:], requestMagic)
	binary.BigEndian.PutUint16(h[4:], flags)
	binary.BigEndian.PutUint16(h[6:], typ)
	binary.BigEndian.PutUint64(h[8:], cookie)
	binary.BigEndian.PutUint64(h[16:], off)
	binary.BigEndian.PutUint32(h[24:], n)
	_, err := c.bw.Write(h)
	return err
}

// readLoop dispatches simple replies to their callers.
func (c *Client) readLoop(br *bufio.Reader) {
	var h [16]byte
	for {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			c.fail(fmt.Errorf("nbd: receive: %w", err))
			return
		}
		if binary.BigEndian.Uint32(h[0:]) != simpleMagic {
			c.fail(errors.New("nbd: unexpected reply magic"))
			return
		}
		errno, cookie := binary.BigEndian.Uint32(h[4:]), binary.BigEndian.Uint64(h[8:])
		c.mu.Lock()
		cl := c.pending[cookie]
		delete(c.pending, cookie)
		c.mu.Unlock()
		if cl == nil {
			c.fail(fmt.Errorf("nbd: reply for unknown cookie %d", cookie))
			return
		}
		if errno != 0 {
			finish(cl, &Error{Errno: errno, Msg: fmt.Sprintf("nbd: server error %d", errno)})
			continue
		}
		if cl.buf != nil {
			if _, err := io.ReadFull(br, cl.buf); err != nil {
				finish(cl, err)
				c.fail(fmt.Errorf("nbd: receive: %w", err))
				return
			}
		}
		finish(cl, nil)
	}
}

// finish delivers cl's result: to its waiter, or to its group.
func finish(cl *call, err error) {
	if g := cl.group; g != nil {
		cl.err = err
		g.finishOne()
		return
	}
	cl.done <- err
}

// Group is a set of requests, on one client or several, whose waiter
// wakes once, when the last of them has its reply, rather than once per
// request: a write fanned out to k + r donors costs one wake-up.
type Group struct {
	left atomic.Int32 // requests outstanding, plus one until Wait
	once sync.Once
	done chan struct{}
}

// NewGroup returns an empty group.
func NewGroup() *Group {
	g := &Group{done: make(chan struct{})}
	g.left.Store(1)
	return g
}

// Wait returns when every request sent in g has its reply; no request
// may be added to g after Wait is first called.
func (g *Group) Wait() {
	g.once.Do(g.finishOne)
	<-g.done
}

func (g *Group) finishOne() {
	if g.left.Add(-1) == 0 {
		close(g.done)
	}
}

// fail ends the connection once and fails every pending request.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = map[uint64]*call{}
	c.mu.Unlock()
	c.conn.Close()
	for _, cl := range pending {
		finish(cl, err)
	}
	close(c.done)
}
