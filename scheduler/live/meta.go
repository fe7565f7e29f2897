package live

// Job meta keys the scheduler reads and writes. Users may set MetaPool and
// MetaModel; the others are the scheduler's.
const (
	// MetaPool is the real node pool to admit into (default Config.Pool).
	MetaPool = "caravan.pool"
	// MetaModel names the model, for policies that use profiles.
	MetaModel = "caravan.model"
	// MetaAdmitted is set (to the admission time, RFC 3339) while admitted.
	MetaAdmitted = "caravan.admitted"
	// MetaPlacement records the admitted slots (see encodePlacement).
	MetaPlacement = "caravan.placement"
	// MetaReason says why a queued job waits; `nomad job status` shows it.
	MetaReason = "caravan.reason"
	// MetaPreemptions counts how often the job was preempted.
	MetaPreemptions = "caravan.preemptions"
)

// nodeIDTarget is the constraint attribute used to pin a group to a node.
const nodeIDTarget = "${node.unique.id}"
