package order

// levelTable interns one term's levels: ids by key, and the keys in the
// order they were interned, so what was interned since a count is read
// back in order (lucidIDs.sync).
type levelTable[K comparable] struct {
	ids  map[K]int32
	keys []K // keys[id]
}

func newLevelTable[K comparable]() levelTable[K] { return levelTable[K]{ids: map[K]int32{}} }

// intern is k's level, or -1 if unseen; with add, an unseen k is given
// the next level.
func (t *levelTable[K]) intern(k K, add bool) int32 {
	if id, ok := t.ids[k]; ok {
		return id
	}
	if !add {
		return -1
	}
	id := int32(len(t.keys))
	t.ids[k] = id
	t.keys = append(t.keys, k)
	return id
}

// count is how many levels are interned.
func (t *levelTable[K]) count() int32 { return int32(len(t.keys)) }

// levelCounts is each interned term's level count (termHour's is 0).
type levelCounts [numTerms]int32

// counts is the estimator's level counts now.
func (e *LucidEstimator) counts() levelCounts {
	var c levelCounts
	c[termShape], c[termUser] = e.shapes.count(), e.users.count()
	c[termModel], c[termUserShape] = e.models.count(), e.userShapes.count()
	return c
}
