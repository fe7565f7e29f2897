package order

// levelTable interns one term's levels: ids by key, and the keys in the
// order they were interned, so a job whose level was unknown when read
// can tell whether its own key has been interned since, without looking
// up every unknown job again whenever any level is learnt.
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

// scanSince is the most keys internedSince compares one by one; past it
// a lookup is cheaper.
const scanSince = 8

// internedSince reports whether k was interned after the first n levels.
func (t *levelTable[K]) internedSince(k K, n int32) bool {
	if n >= t.count() {
		return false
	}
	if t.count()-n > scanSince {
		id, ok := t.ids[k]
		return ok && id >= n
	}
	for _, x := range t.keys[n:] {
		if x == k {
			return true
		}
	}
	return false
}

// levelCounts is each interned term's level count (termHour's is 0).
type levelCounts [numTerms]int32

// sum is the levels interned in all.
func (c *levelCounts) sum() int32 {
	return c[termShape] + c[termUser] + c[termModel] + c[termUserShape]
}

// counts is the estimator's level counts now.
func (e *LucidEstimator) counts() levelCounts {
	var c levelCounts
	c[termShape], c[termUser] = e.shapes.count(), e.users.count()
	c[termModel], c[termUserShape] = e.models.count(), e.userShapes.count()
	return c
}

// learntSince reports whether a level that lv, read from features f
// when the counts were at, lacks has been interned since: otherwise lv
// is still what levels would read (interned levels are never dropped).
// A user × shape level is asked for only where both its parts are
// known; else it is learnt only after one of them, which this reports.
func (e *LucidEstimator) learntSince(lv *[numTerms]int32, at *levelCounts, f *lucidFeatures) bool {
	switch {
	case lv[termShape] < 0 && e.shapes.internedSince(shapeOfFeatures(f.workers, f.fraction), at[termShape]):
		return true
	case lv[termUser] < 0 && e.users.internedSince(f.user, at[termUser]):
		return true
	case lv[termModel] < 0 && e.models.internedSince(f.model, at[termModel]):
		return true
	}
	return lv[termUserShape] < 0 && lv[termUser] >= 0 && lv[termShape] >= 0 &&
		e.userShapes.internedSince(userShapeKey{lv[termUser], lv[termShape]}, at[termUserShape])
}
