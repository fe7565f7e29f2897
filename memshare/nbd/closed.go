package nbd

import (
	"bufio"
	"net"
)

// ClosedClient returns a Client whose connection has already ended with
// err: every request fails with it and Done is closed. A consumer
// re-opening a saved layout stands it in for a slab that did not survive,
// so the slot has a shard to release once it is rebuilt elsewhere.
func ClosedClient(err error) *Client {
	if err == nil {
		err = ErrClosed
	}
	a, b := net.Pipe()
	_ = b.Close()
	_ = a.Close()
	c := &Client{conn: a, bw: bufio.NewWriter(a), pending: map[uint64]*call{}, err: err, done: make(chan struct{})}
	close(c.done)
	return c
}
