package live

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

// Config shapes a scheduler. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Namespace holds the jobs the scheduler manages.
	Namespace string
	// QueuePool is the node-less pool users submit into.
	QueuePool string
	// Pool is the real pool a job is admitted into when its meta has no
	// caravan.pool.
	Pool string
	// Policy is a registry name, e.g. "fifo" or "tiresias-las".
	Policy string
	// QueueLimits are the Tiresias queue thresholds in GPU-seconds (nil =
	// the policy's defaults); small values make tests fast.
	QueueLimits []float64
	// Pairs predicts pairwise co-location slowdowns for the
	// interference-bounded placement (e.g. colocate.LoadPairs on Gavel's
	// measurements); policies "…+interference-bounded" need it. Jobs are
	// told apart by meta caravan.model and caravan.batch_size.
	Pairs place.PairPredictor
	// Quantum is how often the scheduler re-decides without any event
	// (attained service grows with time, so LAS needs a clock).
	Quantum time.Duration
	// ReconcileEvery is how often the scheduler re-reads every job,
	// allocation, pool and node instead of trusting the event stream
	// alone: the safety net for a missed event.
	ReconcileEvery time.Duration
	// Debounce coalesces bursts of events into one round.
	Debounce time.Duration
	// ProgressInterval is how often running jobs' progress files are read
	// (one small fs read per job; what Optimus fits its curves on).
	ProgressInterval time.Duration
	// ProgressReads bounds progress reads a second, all jobs together
	// (each is a request Nomad's server relays to the task's client); the
	// least recently read go first. Zero takes the default; negative: no
	// bound.
	ProgressReads float64
	// PlaceTimeout is how long an admitted job may stay unplaced by Nomad
	// before it returns to the queue, and how long it then waits.
	PlaceTimeout time.Duration
	// MaxUnplaced bounds the admitted jobs Nomad has not placed yet: while
	// that many wait in its broker, a round admits nothing more
	// (throttle.go). Zero takes the default (no bound); negative: no bound.
	MaxUnplaced int
	// ParkAfter is how long a job waits in the queue pool before it is
	// parked in its real pool behind a constraint no node meets, so that
	// Nomad stops re-running its evaluation on every ended allocation
	// (park.go); negative: never park.
	ParkAfter time.Duration
	// NoGCPacing leaves garbage collection to the Go runtime, whose cycles
	// then start wherever the heap crosses its trigger, rounds included.
	// By default the loop collects between rounds when the next round
	// would probably cross it (internal/gcpace).
	NoGCPacing bool
	// StatePath and LockPath are Nomad Variable paths.
	StatePath string
	LockPath  string
	// LockTTL (≥ 10s, Nomad's minimum) and LockDelay govern take-over
	// after the leader dies without releasing the lock: Nomad's servers
	// expire a lock 2 × TTL after its last renewal (renewed every 0.7 ×
	// TTL), so a standby takes over 1.3–2 × TTL + delay after a kill -9.
	LockTTL   time.Duration
	LockDelay time.Duration
	// Listen is the address of the HTTP API (/v1/queue, /metrics).
	Listen string
	// Token is the bearer token the HTTP API requires.
	Token string
	// Pprof serves Go's profiles under /debug/pprof/ on the HTTP API
	// (behind the token, as every endpoint): for an operator asking where
	// the scheduler's CPU and memory go. Off by default.
	Pprof bool
	// TLSCertFile and TLSKeyFile (PEM) make the HTTP API serve HTTPS;
	// both or neither.
	TLSCertFile, TLSKeyFile string
	// RendezvousAddr is where a gang's rank 0 is reached (MASTER_ADDR): a
	// node attribute or meta key as in constraints, or a literal address
	// (127.0.0.1 for a one-host dev cluster).
	RendezvousAddr string
	// KeepDecisions bounds the decision log kept in state.
	KeepDecisions int
	// AdmitDelay pauses between reading a job and writing its admission.
	// Only for tests: it widens the window in which a user's update races
	// an admission, to show the check-and-set keeps the user's change.
	AdmitDelay time.Duration
}

// DefaultConfig is a scheduler for a single-namespace cluster.
func DefaultConfig() Config {
	return Config{
		Namespace:        "default",
		QueuePool:        "caravan-queue",
		Pool:             "default",
		Policy:           "fifo",
		Quantum:          10 * time.Second,
		Debounce:         200 * time.Millisecond,
		ReconcileEvery:   time.Minute,
		ProgressInterval: 5 * time.Second,
		ProgressReads:    defaultProgressReads,
		PlaceTimeout:     time.Minute,
		ParkAfter:        10 * time.Second,
		MaxUnplaced:      defaultMaxUnplaced,
		StatePath:        "caravan/scheduler/state",
		LockPath:         "caravan/scheduler/lock",
		LockTTL:          10 * time.Second,
		LockDelay:        1 * time.Second,
		Listen:           "127.0.0.1:4780",
		RendezvousAddr:   "${attr.unique.network.ip-address}",
		KeepDecisions:    100,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	str := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	dur := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	str(&c.Namespace, d.Namespace)
	str(&c.QueuePool, d.QueuePool)
	str(&c.Pool, d.Pool)
	str(&c.Policy, d.Policy)
	str(&c.StatePath, d.StatePath)
	str(&c.LockPath, d.LockPath)
	str(&c.Listen, d.Listen)
	str(&c.RendezvousAddr, d.RendezvousAddr)
	dur(&c.Quantum, d.Quantum)
	dur(&c.Debounce, d.Debounce)
	dur(&c.ReconcileEvery, d.ReconcileEvery)
	dur(&c.ProgressInterval, d.ProgressInterval)
	dur(&c.PlaceTimeout, d.PlaceTimeout)
	dur(&c.ParkAfter, d.ParkAfter)
	dur(&c.LockTTL, d.LockTTL)
	dur(&c.LockDelay, d.LockDelay)
	if c.ProgressReads == 0 {
		c.ProgressReads = d.ProgressReads
	}
	if c.MaxUnplaced == 0 {
		c.MaxUnplaced = d.MaxUnplaced
	}
	if c.KeepDecisions == 0 {
		c.KeepDecisions = d.KeepDecisions
	}
	return c
}

// Validate reports every unusable field at once.
func (c Config) Validate() error {
	var errs []error
	if c.QueuePool == c.Pool {
		errs = append(errs, fmt.Errorf("queue pool and admission pool are both %q", c.Pool))
	}
	if c.Quantum < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("quantum %s is below 100ms", c.Quantum))
	}
	if c.LockTTL < 10*time.Second {
		errs = append(errs, fmt.Errorf("lock TTL %s is below Nomad's minimum of 10s", c.LockTTL))
	}
	if c.LockDelay < 0 || c.Debounce < 0 || c.AdmitDelay < 0 || c.ProgressInterval < 0 || c.PlaceTimeout < 0 ||
		c.ReconcileEvery < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if c.Token == "" {
		errs = append(errs, errors.New("an API token is required (flag -token or CARAVAN_SCHEDULER_TOKEN)"))
	}
	if math.IsNaN(c.ProgressReads) {
		errs = append(errs, errors.New("progress reads a second must be a number"))
	}
	for i, l := range c.QueueLimits {
		if l <= 0 || (i > 0 && l <= c.QueueLimits[i-1]) {
			errs = append(errs, fmt.Errorf("queue limits must be positive and increasing, got %v", c.QueueLimits))
			break
		}
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		errs = append(errs, errors.New("TLS needs both a certificate and a key file (tls-cert, tls-key)"))
	}
	return errors.Join(errs...)
}
