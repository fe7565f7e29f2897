package consumer

import (
	"sync"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// connPool holds one NBD connection per donor, shared by every slab the
// volume leases there: requests to different slabs of one donor then
// leave in one send (a batch costs one send per donor, whatever the
// number of stripes), and a volume holds as many connections as donors,
// not slabs. A connection that ended is replaced at the next lease; the
// slabs on it are dead anyway (watch marks them).
type connPool struct {
	mu sync.Mutex
	m  map[string]*donorConn
}

// donorConn is one shared connection and how many slabs use it.
type donorConn struct {
	client *nbd.Client
	refs   int
}

// get returns the live connection to addr with one more user, dialling
// it (with the session token of the lease being placed) when there is
// none.
func (p *connPool) get(addr string, dial func() (*nbd.Client, error)) (*donorConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dc := p.m[addr]; dc != nil && !isDone(dc.client) {
		dc.refs++
		return dc, nil
	}
	c, err := dial()
	if err != nil {
		return nil, err
	}
	if p.m == nil {
		p.m = map[string]*donorConn{}
	}
	dc := &donorConn{client: c, refs: 1}
	p.m[addr] = dc
	return dc, nil
}

// put drops one user of dc and closes it after the last.
func (p *connPool) put(addr string, dc *donorConn) {
	p.mu.Lock()
	dc.refs--
	last := dc.refs == 0
	if last && p.m[addr] == dc {
		delete(p.m, addr)
	}
	p.mu.Unlock()
	if last {
		dc.client.Close()
	}
}

func isDone(c *nbd.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}
