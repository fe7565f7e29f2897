package live

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Job meta keys the scheduler reads and writes. Users may set MetaPool and
// MetaModel; the others are the scheduler's.
const (
	// MetaPool is the real node pool to admit into (default Config.Pool).
	MetaPool = "caravan.pool"
	// MetaModel names the model, for policies that use profiles.
	MetaModel = "caravan.model"
	// MetaTargetLoss is the loss at which training is done: Optimus fits
	// the job's progress to estimate the steps left to reach it.
	MetaTargetLoss = "caravan.target_loss"
	// MetaAdmitted is set (to the admission time, RFC 3339) while admitted.
	MetaAdmitted = "caravan.admitted"
	// MetaPlacement records the admitted slots (see encodePlacement).
	MetaPlacement = "caravan.placement"
	// MetaReason says why a job was preempted, written with the preemption
	// itself (never on its own: every job write is a version). Why a job
	// waits now is in the queue view (`caravan queue`, GET /v1/queue).
	MetaReason = "caravan.reason"
	// MetaPreemptions counts how often the job was preempted.
	MetaPreemptions = "caravan.preemptions"
	// MetaParked is set (to the time, RFC 3339) while a queued job waits
	// parked in its real pool behind parkTarget (park.go).
	MetaParked = "caravan.parked"
)

// nodeIDTarget is the constraint attribute used to pin a group to a node.
const nodeIDTarget = "${node.unique.id}"

// parseTargetLoss reads MetaTargetLoss ("" = none).
func parseTargetLoss(v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("meta %s = %q: want a positive number", MetaTargetLoss, v)
	}
	return x, nil
}
