package colocate

import (
	"math"
	"testing"
)

// Leave-one-model-out: a's slowdown beside anyone never depends on a
// measurement that involves a's model, with or without partner profiles.
func TestLeaveOneOutNeverSeesItsOwnModel(t *testing.T) {
	s := synthetic()
	scrambled := append([]Sample(nil), s...)
	for i := range scrambled {
		if involves(scrambled[i], "a") {
			scrambled[i].Slowdown = 9 + float64(i%7)
		}
	}
	for _, opt := range []FitOptions{{}, {Partners: true}} {
		l1, err := NewLeaveOneOut(s, opt)
		if err != nil {
			t.Fatal(err)
		}
		l2, err := NewLeaveOneOut(scrambled, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range s {
			if x.Job.Model != "a" {
				continue
			}
			if p1, p2 := l1.Slowdown(x.Job, x.Partner), l2.Slowdown(x.Job, x.Partner); p1 != p2 {
				t.Fatalf("%+v: a beside %s: %v vs %v after scrambling a's pairs", opt, x.Partner.Model, p1, p2)
			}
		}
		if got := l1.Slowdown(Job{Model: "zz"}, Job{Model: "a"}); !math.IsInf(got, 1) {
			t.Fatalf("an unknown model predicted %v, want +Inf (never co-located)", got)
		}
	}
}

// Partner profiles learn a known partner's pressure: model "f" has c's
// graph but slows everyone 1.6× more, which graph features cannot express;
// the profiled fit predicts it for the held-out a, the plain one cannot.
func TestPartnerProfilesLearnAPartner(t *testing.T) {
	var s []Sample
	for _, x := range synthetic() {
		s = append(s, x)
		if x.Partner.Model == "c" {
			x.Partner.Model = "f"
			x.Slowdown *= 1.6
			s = append(s, x)
		}
	}
	train, _ := split(s, "a")
	plain, err := FitWith(train, 1e-4, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prof, err := FitWith(train, 1e-4, FitOptions{Partners: true})
	if err != nil {
		t.Fatal(err)
	}
	var ePlain, eProf float64
	for _, x := range s {
		if x.Job.Model == "a" && x.Partner.Model == "f" {
			ePlain += math.Abs(math.Log(plain.Slowdown(x.Job, x.Partner) / x.Slowdown))
			eProf += math.Abs(math.Log(prof.Slowdown(x.Job, x.Partner) / x.Slowdown))
		}
	}
	if !(eProf < ePlain/2) {
		t.Fatalf("held-out a beside f: profiled error %.3f, plain %.3f; want the profile to halve it", eProf, ePlain)
	}
}
