package aggsvc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ClientConfig is one worker's view of its job.
type ClientConfig struct {
	Addrs   []string // aggsvc instances (CARAVAN_AGGREGATOR_ADDRS)
	Job     string   // CARAVAN_AGGREGATOR_JOB
	Token   string   // CARAVAN_AGGREGATOR_TOKEN
	Rank    int
	Workers int
	Weight  int
	TLS     *tls.Config
	// PartitionElems bounds one partition (default 1 Mi elements, 4 MiB of
	// float32, which fits the server's default frame limit).
	PartitionElems int
	DialTimeout    time.Duration
}

// Client pushes partitions to the instances of its job's ring and waits for
// the reduced results.
type Client struct {
	cfg   ClientConfig
	ring  *Ring
	conns []*clientConn
}

type partKey struct {
	step uint64
	part uint32
}

type partResult struct {
	data []byte
	err  error
}

type clientConn struct {
	nc      net.Conn
	wmu     sync.Mutex
	w       *bufio.Writer
	mu      sync.Mutex
	pending map[partKey]chan partResult
	err     error
}

// Dial connects to every instance and authenticates as cfg.Rank.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("aggsvc client: no addresses")
	}
	if cfg.PartitionElems <= 0 {
		cfg.PartitionElems = 1 << 20
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	c := &Client{cfg: cfg, ring: NewRing(cfg.Addrs)}
	for _, a := range c.ring.Addrs() {
		cc, err := c.dialOne(ctx, a)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("aggsvc client: %s: %w", a, err)
		}
		c.conns = append(c.conns, cc)
	}
	return c, nil
}

func dialConn(ctx context.Context, addr string, tlsCfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, KeepAlive: 15 * time.Second}
	if tlsCfg != nil {
		td := tls.Dialer{NetDialer: &d, Config: tlsCfg}
		return td.DialContext(ctx, "tcp", addr)
	}
	return d.DialContext(ctx, "tcp", addr)
}

func (c *Client) dialOne(ctx context.Context, addr string) (*clientConn, error) {
	nc, err := dialConn(ctx, addr, c.cfg.TLS, c.cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	h := helloMsg{Job: c.cfg.Job, Token: []byte(c.cfg.Token), Rank: uint32(c.cfg.Rank),
		Workers: uint32(c.cfg.Workers), Weight: uint32(c.cfg.Weight)}
	if err := nc.SetDeadline(time.Now().Add(c.cfg.DialTimeout)); err != nil {
		nc.Close()
		return nil, err
	}
	if err := writeFrame(nc, frameHello, h.encode()); err != nil {
		nc.Close()
		return nil, err
	}
	r := bufio.NewReaderSize(nc, 256<<10)
	f, err := readFrame(r, 64<<20)
	if err == nil && f.typ == frameError {
		err = frameErr(f.body)
	} else if err == nil && f.typ != frameOK {
		err = fmt.Errorf("hello answered with frame type %d", f.typ)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		nc.Close()
		return nil, err
	}
	cc := &clientConn{nc: nc, w: bufio.NewWriterSize(nc, 256<<10), pending: map[partKey]chan partResult{}}
	go cc.readLoop(r)
	return cc, nil
}

func frameErr(body []byte) error {
	m, err := decodeError(body)
	if err != nil {
		return fmt.Errorf("undecodable error frame: %w", err)
	}
	return &ServerError{Code: m.Code, Step: m.Step, Partition: m.Partition, Message: m.Message}
}

func (cc *clientConn) readLoop(r *bufio.Reader) {
	for {
		f, err := readFrame(r, 64<<20)
		if err != nil {
			cc.fail(fmt.Errorf("aggsvc connection lost: %w", err))
			return
		}
		switch f.typ {
		case frameResult:
			m, err := decodeResult(f.body)
			if err != nil {
				cc.fail(err)
				return
			}
			cc.deliver(partKey{m.Step, m.Partition}, partResult{data: m.Data})
		case frameError:
			m, err := decodeError(f.body)
			if err != nil {
				cc.fail(err)
				return
			}
			se := &ServerError{Code: m.Code, Step: m.Step, Partition: m.Partition, Message: m.Message}
			if !cc.deliver(partKey{m.Step, m.Partition}, partResult{err: se}) {
				cc.fail(se) // not about one partition: the connection is done
				return
			}
		}
	}
}

func (cc *clientConn) deliver(k partKey, r partResult) bool {
	cc.mu.Lock()
	ch := cc.pending[k]
	delete(cc.pending, k)
	cc.mu.Unlock()
	if ch != nil {
		ch <- r
	}
	return ch != nil
}

func (cc *clientConn) fail(err error) {
	cc.mu.Lock()
	cc.err = err
	p := cc.pending
	cc.pending = map[partKey]chan partResult{}
	cc.mu.Unlock()
	for _, ch := range p {
		ch <- partResult{err: err}
	}
	cc.nc.Close()
}

// push sends one partition; the result arrives on the returned channel.
func (cc *clientConn) push(m pushMsg) (chan partResult, error) {
	ch := make(chan partResult, 1)
	k := partKey{m.Step, m.Partition}
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return nil, cc.err
	}
	cc.pending[k] = ch
	cc.mu.Unlock()
	cc.wmu.Lock()
	err := writeFrame(cc.w, framePush, m.header(), m.Data)
	cc.wmu.Unlock()
	if err != nil {
		cc.fail(err)
	}
	return ch, nil
}

func (cc *clientConn) flush() error {
	cc.wmu.Lock()
	defer cc.wmu.Unlock()
	return cc.w.Flush()
}

// AllReduce reduces data across the job's workers in place (float32).
func (c *Client) AllReduce(ctx context.Context, step uint64, data []float32, op Op) error {
	if len(data) == 0 {
		return nil
	}
	b := make([]byte, 4*len(data))
	copy(f32s(b), data)
	if err := c.AllReduceBytes(ctx, step, Float32, op, b); err != nil {
		return err
	}
	copy(data, f32s(b))
	return nil
}

// AllReduceBytes reduces little-endian elements of type t in place. The
// buffer is split into partitions spread over the ring; all are pushed
// before any result is awaited, so instances work in parallel.
func (c *Client) AllReduceBytes(ctx context.Context, step uint64, t DType, op Op, data []byte) error {
	size := t.Size()
	if size == 0 || len(data)%size != 0 {
		return fmt.Errorf("aggsvc client: %d bytes is not a whole number of %s", len(data), t)
	}
	chunk := c.cfg.PartitionElems * size
	type wait struct {
		ch   chan partResult
		off  int
		size int
	}
	var waits []wait
	used := map[*clientConn]bool{}
	for off, part := 0, uint32(0); off < len(data); off, part = off+chunk, part+1 {
		end := min(off+chunk, len(data))
		buf := make([]byte, end-off) // aligned copy for the wire
		copy(buf, data[off:end])
		cc := c.conns[c.ring.Pick(c.cfg.Job, step, part)]
		ch, err := cc.push(pushMsg{Step: step, Partition: part, DType: t, Op: op, Data: buf})
		if err != nil {
			return err
		}
		used[cc] = true
		waits = append(waits, wait{ch, off, end - off})
	}
	for cc := range used {
		if err := cc.flush(); err != nil {
			return fmt.Errorf("aggsvc client: %w", err)
		}
	}
	var first error
	for _, w := range waits {
		select {
		case r := <-w.ch:
			if r.err != nil && first == nil {
				first = r.err
			} else if r.err == nil && len(r.data) == w.size {
				copy(data[w.off:], r.data)
			} else if r.err == nil && first == nil {
				first = fmt.Errorf("aggsvc client: result of %d bytes for a %d-byte partition", len(r.data), w.size)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return first
}

// Unregister drops the job on every instance (any worker may do it).
func (c *Client) Unregister() error {
	for _, cc := range c.conns {
		cc.wmu.Lock()
		err := writeFrame(cc.w, frameUnregister)
		if err == nil {
			err = cc.w.Flush()
		}
		cc.wmu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes every connection.
func (c *Client) Close() error {
	for _, cc := range c.conns {
		cc.nc.Close()
	}
	return nil
}

// Register asks one instance to register a job with the admin token and
// returns the job's token.
func Register(ctx context.Context, addr string, tlsCfg *tls.Config, adminToken, job string, workers, weight int) (string, error) {
	nc, err := dialConn(ctx, addr, tlsCfg, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	m := registerMsg{AdminToken: []byte(adminToken), Job: job, Workers: uint32(workers), Weight: uint32(weight)}
	if err := writeFrame(nc, frameRegister, m.encode()); err != nil {
		return "", err
	}
	f, err := readFrame(nc, 1<<16)
	switch {
	case err != nil:
		return "", err
	case f.typ == frameError:
		return "", frameErr(f.body)
	case f.typ != frameToken:
		return "", fmt.Errorf("register answered with frame type %d", f.typ)
	}
	return string(f.body), nil
}
