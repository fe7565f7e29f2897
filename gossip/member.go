package gossip

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"
)

// deadRecordTTL is how long a dead member's records are kept (hidden)
// in case it was a false suspicion.
const deadRecordTTL = 10 * time.Minute

// Member is one gossip participant: a node agent that publishes its
// record, or an observer that only reads the view.
type Member struct {
	cfg     Config
	log     hclog.Logger
	ml      *memberlist.Memberlist
	mlConf  *memberlist.Config
	queue   *memberlist.TransmitLimitedQueue
	store   *store
	coords  *coords
	metrics *metrics
	probe   *prober
	consul  *consulReg

	maxBroadcast int
	onChange     func(node string) // test and benchmark hook

	verMu   sync.Mutex
	lastVer uint64

	resMu       sync.Mutex
	lastLoudRes *Resources // last resources broadcast (not only stored)

	lastCoord *coordinate.Coordinate
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New starts a member: it listens, joins the configured peers (static
// list and Consul) and starts publishing and probing.
func New(cfg *Config) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gossip config: %w", err)
	}
	m := &Member{cfg: *cfg, store: newStore(), stop: make(chan struct{}), maxBroadcast: 1200}
	m.log = cfg.Logger
	if m.log == nil {
		m.log = hclog.NewNullLogger()
	}
	m.log = m.log.Named("gossip")
	m.metrics = newMetrics(cfg.Registry)
	var err error
	if m.coords, err = newCoords(m); err != nil {
		return nil, err
	}
	if !cfg.Observer && !cfg.Probe.Disabled {
		if m.probe, err = newProber(m); err != nil {
			return nil, err
		}
	}
	m.mlConf = m.memberlistConfig()
	if m.ml, err = memberlist.Create(m.mlConf); err != nil {
		m.closeProbe()
		return nil, fmt.Errorf("gossip: starting memberlist on %s:%d: %w", cfg.BindAddr, cfg.BindPort, err)
	}
	m.queue = &memberlist.TransmitLimitedQueue{NumNodes: m.ml.NumMembers, RetransmitMult: m.mlRetransmit()}
	m.store.setAlive(cfg.Name)
	m.publishCoord(true)
	m.start()
	if err := m.joinConfigured(); err != nil {
		m.log.Warn("initial join incomplete; memberlist keeps trying through whoever joins us", "error", err)
	}
	return m, nil
}

func (m *Member) memberlistConfig() *memberlist.Config {
	c := memberlist.DefaultLANConfig()
	c.Name = m.cfg.Name
	c.BindAddr = m.cfg.BindAddr
	c.BindPort = m.cfg.BindPort
	c.AdvertiseAddr = m.cfg.AdvertiseAddr
	c.AdvertisePort = m.cfg.AdvertisePort
	c.Delegate = delegate{m}
	c.Events = delegate{m}
	c.Ping = m.coords
	c.Logger = m.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	if len(m.cfg.Keys) > 0 {
		kr, _ := memberlist.NewKeyring(m.cfg.Keys, m.cfg.Keys[0])
		c.Keyring = kr
		// Refuse plaintext in and out: an unencrypted peer cannot join.
		c.GossipVerifyIncoming = true
		c.GossipVerifyOutgoing = true
	}
	if m.cfg.Tune != nil {
		m.cfg.Tune(c)
	}
	return c
}

func (m *Member) mlRetransmit() int { return m.mlConf.RetransmitMult }

// Name is this member's node name.
func (m *Member) Name() string { return m.cfg.Name }

// Addr is the host:port peers join.
func (m *Member) Addr() string {
	n := m.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Join contacts the given members; it returns how many answered.
func (m *Member) Join(addrs []string) (int, error) {
	if len(addrs) == 0 {
		return 0, nil
	}
	return m.ml.Join(addrs)
}

// Keyring exposes memberlist's keyring for rotation (see README).
func (m *Member) Keyring() *memberlist.Keyring { return m.mlConf.Keyring }

// SetKeys installs keys[0] as the primary and keys[1:] as secondary,
// removing every other key; see README for the rotation sequence.
func (m *Member) SetKeys(keys [][]byte) error {
	kr := m.Keyring()
	if kr == nil {
		return errors.New("gossip: this member runs without encryption; restart it with keys")
	}
	for i, k := range keys {
		if err := memberlist.ValidateKey(k); err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
		if err := kr.AddKey(k); err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
	}
	if err := kr.UseKey(keys[0]); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, k := range keys {
		keep[string(k)] = true
	}
	for _, k := range kr.GetKeys() {
		if !keep[string(k)] {
			if err := kr.RemoveKey(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// numMembers counts alive members from the event delegate's bookkeeping
// (memberlist's own lock is held while it calls us).
func (m *Member) numMembers() int { return m.store.numAlive() }

// nextVersion is strictly increasing and starts from the wall clock, so
// a restarted member's records supersede the ones it published before.
func (m *Member) nextVersion() uint64 {
	m.verMu.Lock()
	defer m.verMu.Unlock()
	v := uint64(time.Now().UnixNano())
	if v <= m.lastVer {
		v = m.lastVer + 1
	}
	m.lastVer = v
	return v
}

// SetSection publishes one section of this member's record (v is
// marshalled to JSON) and broadcasts the change. Observers publish
// nothing. New kinds of state (memshare leases, aggregator load) are new
// section names; older members relay them untouched. The coordinate
// section is never broadcast (see quietSections).
func (m *Member) SetSection(name string, v any) error {
	_, err := m.setSection(name, v, !quietSections[name])
	return err
}

// quietSections change often and matter little when a minute old: they
// travel by push-pull only. Broadcasting every member's coordinate
// drift would flood the gossip packets that carry resource changes (each
// broadcast costs every member ~4·log10(N) sends).
var quietSections = map[string]bool{SectionCoord: true}

// setSection stores a new version of a section when its content changed
// (reporting whether it did) and, when loud, broadcasts it.
func (m *Member) setSection(name string, v any, loud bool) (bool, error) {
	if m.cfg.Observer {
		return false, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("gossip: section %s: %w", name, err)
	}
	if len(data) > maxSectionBytes {
		return false, fmt.Errorf("gossip: section %s is %d bytes, over the limit of %d", name, len(data), maxSectionBytes)
	}
	if cur, ok := m.store.get(m.cfg.Name); ok {
		if s, ok := cur.Sections[name]; ok && string(s.Data) == string(data) {
			return false, nil // unchanged: no new version, no traffic
		}
	}
	r := Record{Node: m.cfg.Name, Sections: map[string]Section{name: {Version: m.nextVersion(), Data: data}}}
	delta := m.store.merge(r)
	if delta == nil {
		return false, nil
	}
	if loud {
		m.broadcast(*delta)
	}
	if m.onChange != nil {
		m.onChange(m.cfg.Name)
	}
	return true, nil
}

// SetResources publishes memory and GPU use. A change is broadcast when
// it matters to a reader (GPUs, total, role, or memory used or donatable
// moved by MemBroadcastDelta since the last broadcast, or donatable
// memory appeared or vanished); smaller drift is stored with a new
// version and reaches the others by push-pull, so a driver republishing
// every few seconds does not make every member relay N updates.
func (m *Member) SetResources(r Resources) error {
	if r.Role == "" {
		r.Role = "node"
	}
	m.resMu.Lock()
	defer m.resMu.Unlock()
	loud := m.lastLoudRes == nil || significantChange(*m.lastLoudRes, r, m.cfg.MemBroadcastDelta)
	changed, err := m.setSection(SectionResources, r, loud)
	if changed && loud {
		m.lastLoudRes = &r
	}
	return err
}

func significantChange(old, cur Resources, delta uint64) bool {
	absDiff := func(a, b uint64) uint64 { return max(a, b) - min(a, b) }
	return old.MemTotalBytes != cur.MemTotalBytes || old.Role != cur.Role ||
		!slices.Equal(old.GPUs, cur.GPUs) ||
		(old.MemDonatableBytes == 0) != (cur.MemDonatableBytes == 0) ||
		absDiff(old.MemDonatableBytes, cur.MemDonatableBytes) >= max(delta, 1) ||
		absDiff(old.MemUsedBytes, cur.MemUsedBytes) >= max(delta, 1)
}

// Leave announces departure and waits up to timeout for it to spread.
func (m *Member) Leave(timeout time.Duration) error { return m.ml.Leave(timeout) }

// Shutdown stops everything; it does not announce (use Leave first for a
// graceful exit). Safe to call more than once.
func (m *Member) Shutdown() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.stop)
		m.consulDeregister()
		m.closeProbe()
		err = m.ml.Shutdown()
		m.wg.Wait()
	})
	return err
}

func (m *Member) closeProbe() {
	if m.probe != nil {
		m.probe.close()
	}
}

func (m *Member) probePort() int {
	if m.probe == nil {
		return 0
	}
	return m.probe.port()
}

// start runs the periodic loops: coordinate publishing and probing.
func (m *Member) start() {
	m.wg.Add(1)
	go m.loop(m.cfg.CoordInterval, func() {
		m.publishCoord(false)
		m.store.prune(time.Now(), deadRecordTTL)
	})
	if m.probe != nil {
		m.wg.Add(1)
		go m.loop(m.cfg.Probe.Interval, m.probe.round)
	}
}

func (m *Member) loop(every time.Duration, f func()) {
	defer m.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// publishCoord republishes the coordinate when it moved by more than
// 0.5 ms of RTT (or on force), keeping steady-state traffic low.
func (m *Member) publishCoord(force bool) {
	c := m.coords.current()
	if !force && m.lastCoord != nil && m.lastCoord.DistanceTo(c) < 500*time.Microsecond {
		return
	}
	m.lastCoord = c
	if err := m.SetSection(SectionCoord, toCoord(c)); err != nil {
		m.log.Warn("publishing coordinate", "error", err)
	}
}

// joinConfigured joins the static list and the members Consul knows.
func (m *Member) joinConfigured() error {
	var errs []error
	addrs := append([]string(nil), m.cfg.Join...)
	if m.cfg.ConsulService != "" {
		found, err := m.consulJoinAddrs()
		if err != nil {
			errs = append(errs, err)
		}
		addrs = append(addrs, found...)
	}
	if len(addrs) > 0 {
		if _, err := m.Join(addrs); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SyncFrom runs a push-pull with up to n other alive members (each a full
// state exchange), so a reader that just joined does not wait for the
// periodic push-pull to learn what its join target had not heard yet.
func (m *Member) SyncFrom(n int) int {
	var addrs []string
	for _, node := range m.ml.Members() {
		if node.Name == m.cfg.Name || len(addrs) >= n {
			continue
		}
		addrs = append(addrs, net.JoinHostPort(node.Addr.String(), strconv.Itoa(int(node.Port))))
	}
	got, _ := m.Join(addrs)
	return got
}
