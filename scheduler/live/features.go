package live

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MetaBatchSize is the per-GPU batch size of the model in MetaModel: with
// it, interference-bounded placement knows the job's type (Gavel's model
// names, e.g. caravan.model=ResNet-50, caravan.batch_size=64).
const MetaBatchSize = "caravan.batch_size"

// maxBatchSize bounds MetaBatchSize: far above any per-GPU batch.
const maxBatchSize = 1 << 20

// parseBatchSize reads MetaBatchSize ("" = unknown, 0).
func parseBatchSize(v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(x >= 1 && x <= maxBatchSize) || x != math.Trunc(x) {
		return 0, fmt.Errorf("meta %s = %q: want a whole number from 1 to %d", MetaBatchSize, v, maxBatchSize)
	}
	return x, nil
}
