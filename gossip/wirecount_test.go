package gossip

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// wireCounter counts every byte memberlist writes (UDP packets and TCP
// streams, both directions of a stream counted at the writer), so the
// benchmark reports gossip's whole cost per node, pings and push-pulls
// included, not only our payload.
type wireCounter struct{ sent atomic.Int64 }

// countingTransport wraps memberlist's own NetTransport.
type countingTransport struct {
	*memberlist.NetTransport
	c       *wireCounter
	streams chan net.Conn
	done    chan struct{}
	once    sync.Once
}

func newCountingTransport(addr string, c *wireCounter) (*countingTransport, error) {
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{addr}, BindPort: 0})
	if err != nil {
		return nil, err
	}
	t := &countingTransport{NetTransport: nt, c: c, streams: make(chan net.Conn), done: make(chan struct{})}
	go t.forward()
	return t, nil
}

func (t *countingTransport) forward() {
	for {
		select {
		case <-t.done:
			return
		case conn := <-t.NetTransport.StreamCh():
			select {
			case t.streams <- &countingConn{Conn: conn, c: t.c}:
			case <-t.done:
				_ = conn.Close()
				return
			}
		}
	}
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.c.sent.Add(int64(len(b)))
	return t.NetTransport.WriteTo(b, addr)
}

func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.c.sent.Add(int64(len(b)))
	return t.NetTransport.WriteToAddress(b, a)
}

func (t *countingTransport) DialTimeout(addr string, d time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, d)
}

func (t *countingTransport) DialAddressTimeout(a memberlist.Address, d time.Duration) (net.Conn, error) {
	conn, err := t.NetTransport.DialAddressTimeout(a, d)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: t.c}, nil
}

func (t *countingTransport) StreamCh() <-chan net.Conn { return t.streams }

func (t *countingTransport) Shutdown() error {
	t.once.Do(func() { close(t.done) })
	return t.NetTransport.Shutdown()
}

type countingConn struct {
	net.Conn
	c *wireCounter
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.c.sent.Add(int64(n))
	return n, err
}
