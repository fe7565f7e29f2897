package live

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caravan-dl/caravan/internal/gcpace"
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// Scheduler admits, places and preempts caravan's jobs on one Nomad cluster.
type Scheduler struct {
	cfg     Config
	api     *api.Client
	log     hclog.Logger
	pol     policy.Policy
	store   *store
	st      *state
	jobs    map[string]*cachedJob
	metrics *metrics
	gc      *gcpace.Pacer
	view    atomic.Pointer[QueueView]
	leader  atomic.Bool
	wake    chan struct{}
	now     func() time.Time
	// savedAt is when state was last written; dirty says it must be
	// written now (an admission, preemption or finish happened).
	savedAt time.Time
	dirty   bool
	// savedBytes is the last write's encoded size (saveGapFor)
	savedBytes int
	// savePoked says a round is due at the end of the save gap to write a
	// dirty state.
	savePoked bool
	saver     saver // writes state in the background (saver.go)
	// held is what caravan's jobs hold on each GPU, kept across rounds
	// (heldbook.go).
	held *heldBook
	// waits and ranks are a round's decisions' reasons and ranking when
	// it has several classes (storage reused).
	waits policy.Waits
	ranks []policy.Rank
	// finished is the round's finished jobs, fed to a learning policy
	// after it (learn.go).
	finished []*entry
	// progress is what was read of running jobs' progress files.
	progress *progressBook
	// badLogged is the last unreadable placement logged per job.
	badLogged map[string]string
	// parkTried is the job version already parked, or whose parking
	// failed other than by a conflict, per job: not parked again until the
	// job changes (park.go).
	parkTried map[string]uint64
	parks     *beside[parkDone] // park writes in flight (park.go)
	// waitBeside makes a round wait for the parks and the periodic full
	// read in flight (tests that compare rounds step by step).
	waitBeside bool
	// placeRecheck is when to look again at an admitted job Nomad had
	// not evaluated yet after PlaceTimeout (unplaced.go).
	placeRecheck map[string]float64
	// awaiting counts admitted jobs Nomad has not placed yet, this round,
	// and admitting the round's admissions (throttle.go).
	awaiting, admitting int
	// mirror is Nomad's state as the rounds see it, fed by feed (the
	// event stream) and replaced by a full reconcile at reconciledAt.
	mirror       *mirror
	feed         *feed
	reconciledAt time.Time
	needFull     bool        // a full reconcile is due (kept until one succeeds)
	bg           *besideRead // the periodic full read in flight, if any
	// poolsChecked is when node pools were last listed, or the jobs last
	// checked for a pool the mirror lacks (observePools).
	poolsChecked time.Time
	// wrote is the Nomad index of the scheduler's newest job or
	// allocation write; a round waits until the mirror holds it.
	wrote   uint64
	writeMu sync.Mutex
	// calls counts the current round's Nomad API calls.
	calls atomic.Int64
	// inc is what the incremental round keeps (incremental.go); every
	// fullEvery rounds one classifies everything afresh.
	inc       *incr
	fullEvery int
}

type gpuKey struct {
	node string
	gpu  int
}

// cachedJob is a full job read at one JobModifyIndex, with its gang.
type cachedJob struct {
	index uint64
	job   *api.Job
	gang  gang
	// targetLoss is the loss at which the job counts as converged
	// (meta caravan.target_loss; 0 = none): Optimus' convergence target.
	targetLoss float64
	// batch is meta caravan.batch_size (0 = unknown).
	batch float64
	err   error
	// fit is the memoised fitKey (nodesets.go).
	fit string
}

// New checks cfg and builds a scheduler talking to Nomad through client.
func New(cfg Config, client *api.Client, log hclog.Logger) (*Scheduler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pol, err := buildPolicy(cfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Scheduler{
		cfg: cfg, api: client, log: log, pol: pol,
		store:        newStore(client, cfg.StatePath, cfg.Namespace, log),
		st:           newState(),
		jobs:         map[string]*cachedJob{},
		held:         newHeldBook(),
		badLogged:    map[string]string{},
		parkTried:    map[string]uint64{},
		parks:        newParker(),
		placeRecheck: map[string]float64{},
		progress:     newProgressBook(),
		wake:         make(chan struct{}, 1),
		feed:         newFeed(),
		now:          time.Now,
		fullEvery:    fullEvery,
	}
	s.metrics = newMetrics(s.view.Load, s.leader.Load)
	s.gc = gcpace.New(gcpace.Config{Off: cfg.NoGCPacing, Background: true, Collected: func(d time.Duration) {
		s.metrics.pacedGCs.Inc()
		s.metrics.pacedGCSeconds.Add(d.Seconds())
	}})
	s.view.Store(&QueueView{Policy: pol.Name()})
	return s, nil
}

// poke asks for a scheduling round soon; it never blocks.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// fullJob returns the job at the stub's index, reading it when it changed.
func (s *Scheduler) fullJob(stub *jobStub) *cachedJob {
	if c := s.jobs[stub.ID]; c != nil && c.index == stub.JobModifyIndex {
		return c
	}
	s.call("job read")
	job, _, err := s.api.Jobs().Info(stub.ID, &api.QueryOptions{Namespace: s.cfg.Namespace})
	if err != nil {
		return &cachedJob{err: fmt.Errorf("read job: %w", err)}
	}
	return s.cacheJob(job)
}

// jobReaders bounds the full-job reads readJobs sends at once.
const jobReaders = 8

// readJobs reads, jobReaders at once, the full jobs the cache lacks at
// their stubs' index (fullJob then finds them cached). A job's event
// normally carries it; when the stream lagged and a reconcile listed
// hundreds of new jobs, reading them one after another held a round at
// 1,000 nodes for 7.7 s. Jobs that stopped are left out (never read).
func (s *Scheduler) readJobs(stubs []*jobStub) {
	var miss []*jobStub
	for _, j := range stubs {
		if c := s.jobs[j.ID]; !j.Stop && s.managed(j) && (c == nil || c.index != j.JobModifyIndex) {
			miss = append(miss, j)
		}
	}
	if len(miss) < 2 {
		return // fullJob reads it
	}
	got := make([]*api.Job, len(miss))
	inParallel(len(miss), jobReaders, func(i int) error {
		s.call("job read")
		got[i], _, _ = s.api.Jobs().Info(miss[i].ID, &api.QueryOptions{Namespace: s.cfg.Namespace})
		return nil
	})
	for _, job := range got {
		if job != nil { // a failed read is retried (and reported) by fullJob
			s.cacheJob(job)
		}
	}
}

// cacheJob parses and caches a full job at its JobModifyIndex: one read by
// fullJob, or the job an event carried (events.go), which spares the read.
func (s *Scheduler) cacheJob(job *api.Job) *cachedJob {
	c := &cachedJob{index: deref(job.JobModifyIndex), job: job}
	c.gang, c.err = parseGang(job)
	if c.err == nil {
		c.targetLoss, c.err = parseTargetLoss(job.Meta[MetaTargetLoss])
	}
	if c.err == nil {
		c.batch, c.err = parseBatchSize(job.Meta[MetaBatchSize])
	}
	s.jobs[deref(job.ID)] = c
	return c
}

// call counts one Nomad API call made by a round, by what it is for.
func (s *Scheduler) call(what string) {
	s.calls.Add(1)
	if s.metrics != nil {
		s.metrics.apiCalls.WithLabelValues(what).Inc()
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// buildPolicy makes the configured policy from the shared registry, so the
// live scheduler runs exactly the code the simulator evaluates.
func buildPolicy(cfg Config) (policy.Policy, error) {
	rc := registry.Config{}
	rc.SetQueueLimits(cfg.QueueLimits)
	rc.Interference.Pairs = cfg.Pairs
	return registry.New(cfg.Policy, rc)
}
