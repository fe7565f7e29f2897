// Package policy is Caravan's scheduling core: pure functions from a
// Snapshot of the cluster and its jobs to Decisions. It does no I/O and reads
// no clock, so the live scheduler and the trace simulator run the same code.
package policy

// Seconds is simulated or wall time in seconds since an arbitrary epoch.
type Seconds = float64

// GPU is one device on a node, with what is already committed on it.
type GPU struct {
	Index     int
	Model     string
	MemoryMiB int64
	// UsedFraction is the sum of compute fractions granted on this GPU (≤ 1).
	UsedFraction float64
	// UsedMemoryMiB is the sum of GPU memory granted on this GPU.
	UsedMemoryMiB int64
	// Util is the summed (predicted or observed) utilisation of the tasks on it.
	Util float64
}

// Node is one machine. Rack groups nodes behind one switch.
type Node struct {
	Name      string
	Rack      string
	GPUs      []GPU
	CPUMilli  int64
	MemoryMiB int64
	// LinkGbps is the node's measured uplink bandwidth (0 = unknown).
	LinkGbps float64
}

// Cluster is the set of nodes a policy may place on.
type Cluster struct {
	Nodes []Node
	// Links are measured per-pair bandwidths (nil = unknown: placement
	// uses Node.LinkGbps and racks only).
	Links *Links
	// Gen is optional change tracking for a producer that hands the same
	// Nodes storage to decision after decision (the simulator): Gen[i]
	// must change whenever anything of node i changes (its usage
	// included). A Capacity reset from such a cluster re-reads only the
	// nodes whose Gen moved (or that its own last round changed). nil =
	// untracked: every node is read. Whoever edits a tracked cluster's
	// nodes in place must bump Gen or hand on a Cluster without it.
	Gen []uint64
}

// JobState is where a job is in its life.
type JobState int

const (
	Queued JobState = iota
	Running
	Finished
)

// Slot is one worker's share of one GPU.
type Slot struct {
	Node     string
	GPU      int
	Fraction float64 // 1 = the whole GPU
	MemMiB   int64
}

// Placement is a gang's slots: every worker of a job, started together.
type Placement struct {
	Slots []Slot
}

// GPUs is the GPU share the slots hold: the sum of their fractions.
func (p Placement) GPUs() float64 {
	s := 0.0
	for _, sl := range p.Slots {
		s += sl.Fraction
	}
	return s
}

// ProgressPoint is one line a task appended to $CARAVAN_PROGRESS_FILE.
type ProgressPoint struct {
	Step    float64
	Loss    float64
	Samples float64
}

// ModelFeatures describe a model for utilisation prediction (Horus).
type ModelFeatures struct {
	ParamsM       float64 // parameters, millions
	GFLOPsPerSamp float64 // forward+backward GFLOPs per sample
	BatchSize     float64
}

// Job is a gang of workers and everything a policy may know about it.
type Job struct {
	// The fields every decision reads come first, so that a job's hot
	// fields share one or two cache lines: a decision at 100,000 jobs
	// reads tens of thousands of them, each a miss.
	ID    string
	State JobState

	// Workers is the gang size; each worker needs Fraction of one GPU and MemMiB.
	Workers   int
	Fraction  float64 // per worker; 1 for whole-GPU jobs
	MemMiB    int64
	Placement Placement
	Submit    Seconds

	// Attained is the service received, in GPU-seconds (Tiresias).
	Attained Seconds
	// Executed is the wall time the job has run.
	Executed Seconds
	// Accrual, when On, says Attained and Executed are as of its Since
	// and grow on their own while the job runs (read them through
	// ServiceAt): a caller need not rewrite, nor re-stamp (JobGen), a
	// running job every round only because time passed.
	Accrual Accrual
	// LastStart is when the job last (re)started; QueuedSince when it last queued.
	LastStart, QueuedSince Seconds
	// OracleDuration is the job's true run time; only oracle policies (SRTF)
	// may read it, and they say so in their name.
	OracleDuration Seconds
	Preemptions    int

	User  string
	Model string
	// Group names the tuning job a trial belongs to ("" = an ordinary
	// job); the fluid policy water-fills each group's share of GPUs.
	Group string
	// MinWorkers/MaxWorkers bound elastic resizing (Optimus); 0 means fixed.
	MinWorkers, MaxWorkers int

	// Progress is the observed convergence (Optimus fits it online).
	Progress []ProgressPoint
	// StepsLeft is how many steps the job still has to run when its owner
	// decides that (a tuning trial's rung budget, set by the tuner: no
	// oracle); 0 = unknown.
	StepsLeft float64
	// TargetLoss ends the job when reached (0 = run for its duration/steps).
	TargetLoss float64
	// StepTimes holds observed seconds per step keyed by worker count.
	StepTimes map[int]Seconds
	// Util is the job's GPU utilisation at a whole GPU, if known (0..1).
	Util     float64
	Features ModelFeatures
	// Speed is the job's step time by placement shape, if known (nil =
	// unknown). The simulator sets it from the job's measured model
	// profile; the live scheduler may learn it from observed step times.
	Speed SpeedProfile
	// HardMinFraction/HardMinMemMiB are what the user declared as a floor:
	// right-sizing never goes below them.
	HardMinFraction float64
	HardMinMemMiB   int64
}

// Accrual is how a running job's service grows without the job being
// rewritten: from Since on, 1 s of Executed and GPUs GPU-seconds of
// Attained per second (GPUs: the gang's share, the sum of its slots'
// fractions). Since may lie ahead of Now (service that begins once the
// tasks run): nothing accrues before it. Only a Running job accrues: a
// caller stopping one (preempted, finished) folds ServiceAt into its
// fields and turns the accrual off, a change like any other.
type Accrual struct {
	On    bool
	Since Seconds
	GPUs  float64
}

// ServiceAt is j's attained service (GPU-seconds) and executed time at
// now: its Attained and Executed, advanced by its Accrual if it runs.
// Policies read service only through it.
func (j *Job) ServiceAt(now Seconds) (attained, executed Seconds) {
	if !j.Accrues() {
		return j.Attained, j.Executed
	}
	return j.Accrual.At(now, j.Attained, j.Executed)
}

// Accrues reports whether j's service grows on its own: it runs with
// its Accrual on.
func (j *Job) Accrues() bool { return j.Accrual.On && j.State == Running }

// At advances service (attained, executed), as of a.Since, to now.
func (a Accrual) At(now, attained, executed Seconds) (Seconds, Seconds) {
	if dt := now - a.Since; dt > 0 {
		return attained + a.GPUs*dt, executed + dt
	}
	return attained, executed
}

// SpeedProfile predicts a job's seconds per training step on a placement
// shape: GPUs (workers) per node of its slots, in any order, e.g. [2 2 2 2]
// for four nodes with two workers each; a result ≤ 0 means unknown.
// Implementations must be deterministic and safe for concurrent use.
type SpeedProfile interface {
	StepTime(shape []int) float64
}

// Snapshot is everything a policy sees at one instant.
type Snapshot struct {
	Now     Seconds
	Cluster Cluster
	// Jobs holds every queued and running job (finished ones may be omitted).
	Jobs []*Job
	// SkipReasons says the caller will not read Decision.Waiting (the
	// simulator, or a live round between two queue views): policies may
	// leave it empty but for the jobs they preempt, and need not look
	// past a head-of-line-blocked job, since only reasons would come of
	// it. At scale (4,096 jobs) a preemptive ordering's decision still
	// reads every job for its walk, as with reasons, and may fill Ranking.
	SkipReasons bool
	// SubmitOrdered says Jobs is sorted by Submit, then ID (the tie-break
	// every ordering ends with), and every Submit is a number (not NaN). An ordering by submit time (FIFO) may then
	// take the list as its ranking instead of sorting tens of thousands of
	// jobs on every decision of a congested replay.
	SubmitOrdered bool
	// JobGen is optional change tracking for Jobs, as Cluster.Gen is for
	// nodes: nil = untracked, every job is read on every decision (and a
	// JobGen whose length is not len(Jobs) counts as nil). When set, the
	// caller guarantees, for every index i: if JobGen[i] is non-zero and
	// equal to JobGen[i] of the last snapshot handed to the same policy
	// instance, then Jobs[i] is the same job (same ID and Submit) as then
	// and nothing a policy may read of it has changed since: no field of
	// the Job, nothing it points to (Placement.Slots, Progress,
	// StepTimes, what Speed answers; Progress and StepTimes excepted
	// where ProgressGen is set) — Attained, Executed and State
	// included, which advance on every round a job runs, unless the job
	// accrues (Job.Accrual): then its service at this Now is what
	// ServiceAt says, with no new stamp. The *Job pointer
	// itself may differ (a caller may build fresh Jobs each round). 0 =
	// this job is untracked: read it every time. The simplest way to keep
	// the promise is one counter per caller: on adding a job and on every
	// change to one, stamp it with ++counter (a stamp is then never
	// reused). Moving a job to another index is a change at both indexes;
	// it is correct with fresh stamps, and only costs time, so keep
	// positions stable (append arrivals; drop or compact finished jobs
	// rarely). A policy reuses what it derived from unchanged jobs
	// without reading them; everything that is not a job field (Now, the
	// cluster, a policy's learned state) the policy tracks itself, so
	// decisions are identical to the untracked path's. A caller that
	// changes a job without a new stamp gets decisions made on the job as
	// it was (TestJobGenCallerBug shows one): it is the caller's bug.
	//
	// Setting JobGen also means the Decision's Waiting and Ranking slices
	// (still complete: every waiting job, the full ranking) belong to the
	// policy and are valid only until its next Decide, which rewrites
	// them in place instead of allocating ~6 MB per decision at 100,000
	// jobs: copy what must outlive the round.
	JobGen []uint64
	// ProgressGen, when set beside JobGen (same length), takes the
	// observed training progress out of JobGen's promise: a job's
	// Progress and StepTimes may change under an unchanged JobGen
	// stamp, and then its ProgressGen stamp moves (the same rules as
	// JobGen's, from the same counter or another). A running job reports
	// progress every round, so without it every running job is re-read
	// every round by every policy, though only the few that fit progress
	// curves (optimus) read it. A policy that keeps anything derived from
	// Progress or StepTimes follows ProgressGen too
	// (JobTrack.UpdateWithProgress); the others need not look at it.
	// Without JobGen it means nothing.
	ProgressGen []uint64
	// MaxStarts is the start budget: at most this many starts in the
	// Decision (0: no bound). A caller that applies only so many starts a
	// round sets it, so the policy does not spend a decision on starts
	// that would be thrown away (budget.go). The Decision is then the
	// unbounded one's first MaxStarts starts and the preemptions made
	// for them; each queued job the walk did not reach waits with
	// BudgetReason. Waiting and Ranking stay complete. A tuning group's
	// plan (fluid) comes whole on top of the inner policy's budgeted
	// starts: part of it could start a trial on GPUs a dropped move was
	// to free.
	MaxStarts int
}

// JobsTracked reports whether s carries usable JobGen change tracking.
func (s *Snapshot) JobsTracked() bool {
	return s.JobGen != nil && len(s.JobGen) == len(s.Jobs)
}

// ProgressTracked reports whether s's jobs are tracked (JobsTracked) and
// their progress apart (ProgressGen): JobGen alone then does not cover
// Progress and StepTimes.
func (s *Snapshot) ProgressTracked() bool {
	return s.JobsTracked() && len(s.ProgressGen) == len(s.Jobs)
}

// Start admits (or resizes, if the job runs) a job with this placement.
type Start struct {
	JobID     string
	Placement Placement
}

// Decision is what a policy wants changed now. Preempts are applied before
// Starts, so a start may use what a preemption frees.
type Decision struct {
	Preempts []string
	Starts   []Start
	// Waiting explains why each queued job that did not start still waits,
	// one entry per job.
	Waiting Waits
	// Ranking is the priority order the decision was made in, highest
	// first, when the policy has one and the caller wants reasons (not
	// SkipReasons; with it, Ranking may be empty). Callers explain from
	// it rather than ranking again: an ordering may keep state across
	// calls.
	Ranking []Rank
}

// Rank is one job's place in a Decision's Ranking.
type Rank struct {
	JobID string
	// Queue is the ordering's priority queue (Tiresias), 0 if it has none.
	Queue int
}

// Wait says why one queued job still waits.
type Wait struct {
	JobID  string
	Reason string
}

// Waits is a decision's waiting list. It is a slice rather than a map
// because a policy fills it for every queued job on every decision (10,000
// at scale) while most readers just walk it: hashing each ID cost a fifth
// of a decision.
type Waits []Wait

// Reason is why job id waits, or "" if it is not listed. It scans the
// list: callers with many lookups should build Map once.
func (w Waits) Reason(id string) string {
	for i := range w {
		if w[i].JobID == id {
			return w[i].Reason
		}
	}
	return ""
}

// Map indexes the list by job ID.
func (w Waits) Map() map[string]string {
	m := make(map[string]string, len(w))
	for _, x := range w {
		m[x.JobID] = x.Reason
	}
	return m
}

// Policy decides. Implementations must be deterministic and free of I/O.
type Policy interface {
	Name() string
	Decide(s *Snapshot) Decision
}
