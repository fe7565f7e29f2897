package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// lucidIDs numbers the features of the jobs a tracked Lucid keys
// (users, models, gang shapes and user × shape pairs), whether the model
// has learnt them or not, and keeps each one's level in the estimator
// (-1: not learnt). A slot keeps its job's ids, so its levels are a few
// array reads. The estimator's tables only grow: each call brings the
// levels up to date from what it interned since (sync), a few levels a
// decision. Checking every slot that lacked a level whenever the model
// learnt one cost ~2.5 ms a decision at 10k × 100k, where ~80,000 jobs
// lack one the young model has not met.
type lucidIDs struct {
	users, models levelTable[string]
	shapes        levelTable[shapeKey]
	pairs         levelTable[[2]int32] // (user id, shape id)
	// each id's level, by id: of users, models, shapes and pairs
	user, model, shape, pair []int32
	// byUser and byShape are the id of each user and shape level of
	// the estimator (-1: no job keyed had it), to find the pair a user
	// × shape level learnt belongs to
	byUser, byShape []int32
	// at is the estimator's level counts the levels are current with
	at levelCounts
}

// lucidFeatureIDs are one job's ids (-1: a shape that can never be
// learnt, as NaN) and its hour level (-1 unless the model has the term).
type lucidFeatureIDs struct {
	user, model, shape, pair, hour int32
}

func newLucidIDs() lucidIDs {
	return lucidIDs{users: newLevelTable[string](), models: newLevelTable[string](),
		shapes: newLevelTable[shapeKey](), pairs: newLevelTable[[2]int32]()}
}

// sync brings every id's level up to date with e, from the levels it
// learnt since the last call: users, shapes and models first, as a user
// × shape level is learnt only after both its parts.
func (x *lucidIDs) sync(e *LucidEstimator) {
	c := e.counts()
	if c == x.at {
		return
	}
	for lv := x.at[termUser]; lv < c[termUser]; lv++ {
		id := x.users.intern(e.users.keys[lv], false)
		x.byUser = append(x.byUser, id)
		if id >= 0 {
			x.user[id] = lv
		}
	}
	for lv := x.at[termShape]; lv < c[termShape]; lv++ {
		id := x.shapes.intern(e.shapes.keys[lv], false)
		x.byShape = append(x.byShape, id)
		if id >= 0 {
			x.shape[id] = lv
		}
	}
	for lv := x.at[termModel]; lv < c[termModel]; lv++ {
		if id := x.models.intern(e.models.keys[lv], false); id >= 0 {
			x.model[id] = lv
		}
	}
	for lv := x.at[termUserShape]; lv < c[termUserShape]; lv++ {
		k := e.userShapes.keys[lv]
		if u, s := x.byUser[k.user], x.byShape[k.shape]; u >= 0 && s >= 0 {
			if id := x.pairs.intern([2]int32{u, s}, false); id >= 0 {
				x.pair[id] = lv
			}
		}
	}
	x.at = c
}

// of is j's ids, numbering features first seen (at their level in e,
// which sync has brought the others to).
func (x *lucidIDs) of(e *LucidEstimator, j *policy.Job) lucidFeatureIDs {
	f := lucidFeatureIDs{hour: -1, pair: -1}
	if e.cfg.HourOfDay {
		f.hour = hourOf(j.Submit)
	}
	var lv int32
	if f.user, lv = numberOf(&x.users, &x.user, j.User, &e.users); lv >= 0 {
		x.byUser[lv] = f.user
	}
	f.model, _ = numberOf(&x.models, &x.model, j.Model, &e.models)
	if sk := shapeOf(j); sk != sk { // NaN: no lookup finds it
		f.shape = -1
		return f
	} else if f.shape, lv = numberOf(&x.shapes, &x.shape, sk, &e.shapes); lv >= 0 {
		x.byShape[lv] = f.shape
	}
	pk := [2]int32{f.user, f.shape}
	if id, ok := x.pairs.ids[pk]; ok {
		f.pair = id
		return f
	}
	f.pair = x.pairs.intern(pk, true)
	pl := int32(-1)
	if u, s := x.user[f.user], x.shape[f.shape]; u >= 0 && s >= 0 {
		pl = e.userShapes.intern(userShapeKey{u, s}, false)
	}
	x.pair = append(x.pair, pl)
	return f
}

// numberOf is k's id in t, numbered on first sight with its level in
// learnt appended to levels; lv is that level when k was new (-1 else,
// or when unlearnt).
func numberOf[K comparable](t *levelTable[K], levels *[]int32, k K, learnt *levelTable[K]) (id, lv int32) {
	if id, ok := t.ids[k]; ok {
		return id, -1
	}
	id, lv = t.intern(k, true), learnt.intern(k, false)
	*levels = append(*levels, lv)
	return id, lv
}

// known reads again the levels lv lacks, of features f.
func (x *lucidIDs) known(lv *[numTerms]int32, f *lucidFeatureIDs) {
	if lv[termUser] < 0 {
		lv[termUser] = x.user[f.user]
	}
	if lv[termModel] < 0 {
		lv[termModel] = x.model[f.model]
	}
	if lv[termShape] < 0 && f.shape >= 0 {
		lv[termShape] = x.shape[f.shape]
	}
	if lv[termUserShape] < 0 && lv[termUser] >= 0 && lv[termShape] >= 0 {
		lv[termUserShape] = x.pair[f.pair]
	}
}

// levels is what the estimator's levels give for features f, term by
// term (a user × shape level only where both its parts are known).
func (x *lucidIDs) levels(f *lucidFeatureIDs) [numTerms]int32 {
	var lv [numTerms]int32
	for t := range lv {
		lv[t] = -1
	}
	lv[termHour] = f.hour
	x.known(&lv, f)
	return lv
}
