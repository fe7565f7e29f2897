package gossip

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// prober measures bandwidth to peers and serves their probes.
type prober struct {
	m      *Member
	ln     net.Listener
	keys   [][]byte
	client dutyLimiter // probes this member starts
	server dutyLimiter // probes this member serves
	wg     sync.WaitGroup

	mu    sync.Mutex
	links map[string]Link
	// full marks peers measured at least once with a full-length probe
	// (sized from an estimate, lasting at least half the target); the
	// first such sample replaces the rough first estimate.
	full map[string]bool
}

func newProber(m *Member) (*prober, error) {
	c := m.cfg.Probe
	port := c.Port
	if port == 0 {
		port = m.cfg.BindPort + 1
		if m.cfg.BindPort == 0 {
			port = 0
		}
	} else if port < 0 {
		port = 0
	}
	host := c.BindAddr
	if host == "" {
		host = m.cfg.BindAddr
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("gossip: probe endpoint: %w", err)
	}
	p := &prober{m: m, ln: ln, keys: probeKeys(m.cfg.Keys), links: map[string]Link{}, full: map[string]bool{}}
	p.client.share, p.server.share = c.Share, c.Share
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *prober) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *prober) close() {
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *prober) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer c.Close()
			if err := p.serveOne(c); err != nil {
				p.m.log.Debug("probe refused", "remote", c.RemoteAddr().String(), "error", err)
			}
		}()
	}
}

var zeros = make([]byte, 64<<10)

func (p *prober) serveOne(c net.Conn) error {
	cfg := p.m.cfg.Probe
	_ = c.SetDeadline(time.Now().Add(cfg.Timeout))
	nonce := make([]byte, nonceLen)
	_, _ = rand.Read(nonce)
	if _, err := c.Write(append([]byte(probeMagic), nonce...)); err != nil {
		return err
	}
	var req [8 + macLen]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return fmt.Errorf("reading request: %w", err)
	}
	size := binary.BigEndian.Uint64(req[:8])
	if !validMAC(p.keys, nonce, size, req[8:]) {
		p.m.metrics.probes.WithLabelValues("served_denied").Inc()
		_, _ = c.Write([]byte{statusDenied})
		return errors.New("bad token")
	}
	if size < 4096 || size > uint64(cfg.MaxBytes) {
		_, _ = c.Write([]byte{statusSize})
		return fmt.Errorf("size %d outside [4096, %d]", size, cfg.MaxBytes)
	}
	start := time.Now()
	if !p.server.take(start, cfg.Timeout) {
		p.m.metrics.probes.WithLabelValues("served_busy").Inc()
		_, _ = c.Write([]byte{statusBusy})
		return nil
	}
	_, _ = c.Write([]byte{statusOK})
	err := writeN(c, int64(size))
	p.server.charge(time.Now(), time.Since(start))
	p.m.metrics.probes.WithLabelValues("served").Inc()
	return err
}

func writeN(w io.Writer, n int64) error {
	for n > 0 {
		chunk := zeros
		if int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		k, err := w.Write(chunk)
		n -= int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// round probes up to Peers peers, least recently probed first (ties in
// random order), as long as the duty limiter allows.
func (p *prober) round() {
	for _, n := range p.pickPeers() {
		if !p.client.allow(time.Now()) {
			return
		}
		p.probeNode(n)
	}
}

type peerAddr struct {
	name, addr string
	last       int64
}

func (p *prober) pickPeers() []peerAddr {
	var cands []peerAddr
	for _, n := range p.m.ml.Members() {
		if n.Name == p.m.cfg.Name || n.State != memberlist.StateAlive {
			continue
		}
		var meta nodeMeta
		if json.Unmarshal(n.Meta, &meta) != nil || meta.ProbePort == 0 || meta.Observer {
			continue
		}
		p.mu.Lock()
		last := p.links[n.Name].UnixMillis
		p.mu.Unlock()
		cands = append(cands, peerAddr{n.Name, net.JoinHostPort(n.Addr.String(), strconv.Itoa(meta.ProbePort)), last})
	}
	mrand.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].last < cands[j].last })
	if len(cands) > p.m.cfg.Probe.Peers {
		cands = cands[:p.m.cfg.Probe.Peers]
	}
	return cands
}

// probeNode measures one peer and folds the result into the EWMA.
func (p *prober) probeNode(n peerAddr) {
	cfg := p.m.cfg.Probe
	size, sized := p.nextSize(n.name)
	if !p.client.take(time.Now(), cfg.Timeout) {
		return
	}
	start := time.Now()
	bps, rtt, err := p.measure(n.addr, size)
	end := time.Now()
	took := end.Sub(start)
	p.client.charge(end, took)
	if err != nil {
		p.m.metrics.probes.WithLabelValues("failed").Inc()
		p.m.log.Debug("bandwidth probe failed", "peer", n.name, "error", err)
		return
	}
	p.m.metrics.probes.WithLabelValues("ok").Inc()
	p.m.metrics.probeBW.Observe(bps)
	p.m.metrics.probeTime.Observe(took.Seconds())
	p.m.log.Debug("bandwidth probe", "peer", n.name, "bytes", size, "mbit_s", bps*8/1e6, "took", took)
	// The first probe is never full-length, however long it took: on a
	// loaded host a stalled 1 MiB bootstrap can outlast the half target
	// and would otherwise stay averaged into the estimate.
	p.record(n.name, bps, rtt, sized && took >= cfg.TargetDuration/2)
}

// nextSize aims the probe at TargetDuration from the current estimate;
// sized says there was one (false: the first probe, cfg.Bytes).
func (p *prober) nextSize(peer string) (size int64, sized bool) {
	cfg := p.m.cfg.Probe
	p.mu.Lock()
	l, ok := p.links[peer]
	p.mu.Unlock()
	if !ok || l.BandwidthBps <= 0 {
		return cfg.Bytes, false
	}
	want := int64(l.BandwidthBps * cfg.TargetDuration.Seconds())
	return max(cfg.MinBytes, min(cfg.MaxBytes, want)), true
}

// record folds a sample in. A short probe (the first, sized before any
// estimate existed) is dominated by TCP slow start, so the first
// full-length sample replaces it instead of being averaged with it.
func (p *prober) record(peer string, bps float64, rtt time.Duration, fullLength bool) {
	alpha := p.m.cfg.Probe.Alpha
	p.mu.Lock()
	l := p.links[peer]
	if l.Samples == 0 || (fullLength && !p.full[peer]) {
		l.BandwidthBps = bps
	} else {
		l.BandwidthBps = alpha*bps + (1-alpha)*l.BandwidthBps
	}
	p.full[peer] = p.full[peer] || fullLength
	l.Peer, l.Samples, l.RTTSeconds, l.UnixMillis = peer, l.Samples+1, rtt.Seconds(), time.Now().UnixMilli()
	p.links[peer] = l
	links := p.freshestLocked()
	p.mu.Unlock()
	if err := p.m.SetSection(SectionLinks, links); err != nil {
		p.m.log.Warn("publishing links", "error", err)
	}
}

func (p *prober) freshestLocked() []Link {
	out := make([]Link, 0, len(p.links))
	for _, l := range p.links {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UnixMillis > out[j].UnixMillis })
	if len(out) > p.m.cfg.MaxLinks {
		out = out[:p.m.cfg.MaxLinks]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}

// measure downloads size bytes and times them from the first byte on, so
// connection set-up and the request's RTT do not count.
func (p *prober) measure(addr string, size int64) (bps float64, rtt time.Duration, err error) {
	cfg := p.m.cfg.Probe
	t0 := time.Now()
	c, err := net.DialTimeout("tcp", addr, cfg.Timeout)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	rtt = time.Since(t0)
	_ = c.SetDeadline(time.Now().Add(cfg.Timeout))
	r := bufio.NewReaderSize(c, 64<<10)
	hello := make([]byte, len(probeMagic)+nonceLen)
	if _, err := io.ReadFull(r, hello); err != nil || string(hello[:len(probeMagic)]) != probeMagic {
		return 0, rtt, fmt.Errorf("bad greeting: %v", err)
	}
	var req [8 + macLen]byte
	binary.BigEndian.PutUint64(req[:8], uint64(size))
	copy(req[8:], probeMAC(p.keys[0], hello[len(probeMagic):], uint64(size)))
	if _, err := c.Write(req[:]); err != nil {
		return 0, rtt, err
	}
	st, err := r.ReadByte()
	if err != nil {
		return 0, rtt, err
	}
	if st != statusOK {
		return 0, rtt, fmt.Errorf("peer answered status %d", st)
	}
	return timedRead(r, size, rtt)
}

func timedRead(r io.Reader, size int64, rtt time.Duration) (float64, time.Duration, error) {
	buf := make([]byte, 64<<10)
	first, err := r.Read(buf)
	if err != nil {
		return 0, rtt, err
	}
	start := time.Now()
	got, err := io.CopyBuffer(io.Discard, io.LimitReader(r, size-int64(first)), buf)
	el := time.Since(start)
	if err != nil || got != size-int64(first) {
		return 0, rtt, fmt.Errorf("short transfer: %d of %d bytes: %v", got+int64(first), size, err)
	}
	if got == 0 || el <= 0 {
		return 0, rtt, errors.New("transfer too small to time")
	}
	return math.Max(1, float64(got)/el.Seconds()), rtt, nil
}
