package live

// record is what the scheduler remembers about one job beyond what Nomad
// stores. Times are Unix seconds.
type record struct {
	Submit      float64 `json:"submit"`
	Attained    float64 `json:"attained"` // GPU-seconds
	Executed    float64 `json:"executed"` // seconds running
	LastStart   float64 `json:"last_start,omitempty"`
	QueuedSince float64 `json:"queued_since,omitempty"`
	// Accounted is when Attained was last brought up to date while the
	// job ran; 0 while it does not run.
	Accounted   float64 `json:"accounted,omitempty"`
	Preemptions int     `json:"preemptions,omitempty"`
	Admissions  int     `json:"admissions,omitempty"`
	// Placement is the last admitted placement (encodePlacement): a
	// preempted job holds its GPUs until its allocations have stopped.
	Placement  string  `json:"placement,omitempty"`
	FinishedAt float64 `json:"finished_at,omitempty"`
	// PlaceFailedAt and PlaceFailure: when and why Nomad last left the
	// admitted job unplaced (see unplaced.go).
	PlaceFailedAt float64 `json:"place_failed_at,omitempty"`
	PlaceFailure  string  `json:"place_failure,omitempty"`
	// CreateIndex is the Nomad job's, telling a purged and re-created job
	// of the same name from this one.
	CreateIndex uint64 `json:"create_index,omitempty"`
	// learnt: the job, finished, was fed to the policy (learn.go); not
	// stored: a new leader's policy learns it again
	learnt bool
}

// decision is one action in the decision log.
type decision struct {
	At     float64 `json:"at"`
	Job    string  `json:"job"`
	Action string  `json:"action"` // admit, preempt, conflict, error
	Detail string  `json:"detail,omitempty"`
}

// state is the scheduler's persisted bookkeeping.
type state struct {
	Jobs      map[string]*record `json:"jobs"`
	Decisions []decision         `json:"decisions,omitempty"`
}

func newState() *state { return &state{Jobs: map[string]*record{}} }

// job returns the job's record, creating it as submitted at submit.
func (s *state) job(id string, submit float64, createIndex uint64) *record {
	r := s.Jobs[id]
	if r == nil {
		r = &record{Submit: submit, QueuedSince: submit, CreateIndex: createIndex}
		s.Jobs[id] = r
	}
	return r
}

// newRun reports whether a queued job is a new run of its name: it was
// purged and re-created, or re-run after it finished. Its service,
// preemptions and wait start again from its submit time.
func (r *record) newRun(createIndex uint64) bool {
	return r.FinishedAt > 0 || (r.CreateIndex != 0 && createIndex != 0 && r.CreateIndex != createIndex)
}

// restart forgets a previous run.
func (r *record) restart(submit float64, createIndex uint64) {
	*r = record{Submit: submit, QueuedSince: submit, CreateIndex: createIndex}
}

// log appends a decision, keeping the newest keep.
func (s *state) log(keep int, d decision) {
	s.Decisions = append(s.Decisions, d)
	if over := len(s.Decisions) - keep; over > 0 {
		s.Decisions = append([]decision(nil), s.Decisions[over:]...)
	}
}

// accrue brings a running job's service up to now; share is the gang's
// GPU share (workers × fraction). It reports whether accrual began just
// now: the caller saves that point soon, or a scheduler restarted before
// the next periodic write would not know the job ran from then.
func (r *record) accrue(now, share float64) (began bool) {
	if r.Accounted > 0 && now > r.Accounted {
		dt := now - r.Accounted
		r.Executed += dt
		r.Attained += dt * share
	}
	began = r.Accounted == 0
	r.Accounted = now
	return began
}

// pause stops accrual: the job no longer runs.
func (r *record) pause() { r.Accounted = 0 }
