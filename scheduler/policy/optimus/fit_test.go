package optimus

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

func TestFitCurveRecoversBetas(t *testing.T) {
	truth := Curve{B0: 0.002, B1: 0.5, B2: 0.3}
	var pts []policy.ProgressPoint
	for k := 0.0; k <= 5000; k += 250 {
		pts = append(pts, policy.ProgressPoint{Step: k, Loss: truth.Loss(k)})
	}
	c, err := FitCurve(pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ got, want float64 }{{c.B0, truth.B0}, {c.B1, truth.B1}, {c.B2, truth.B2}} {
		if math.Abs(p.got-p.want) > 1e-3*p.want {
			t.Errorf("fit %+v, want %+v", c, truth)
			break
		}
	}
	if c.RMSE > 1e-6 {
		t.Errorf("RMSE %g on exact data", c.RMSE)
	}
	k, ok := c.StepsTo(0.4) // 1/(0.002k+0.5) = 0.1 → k = 4750
	if !ok || math.Abs(k-4750) > 5 {
		t.Errorf("steps to 0.4 = %g, %v; want 4750", k, ok)
	}
	if _, ok := c.StepsTo(0.29); ok {
		t.Error("a target below the asymptote is unreachable")
	}
}

func TestFitCurveNeedsPoints(t *testing.T) {
	if _, err := FitCurve([]policy.ProgressPoint{{Step: 1, Loss: 1}, {Step: 2, Loss: 0}}); err == nil {
		t.Fatal("two points (one with zero loss) must not fit")
	}
}

func TestFitSpeed(t *testing.T) {
	truth := Speed{C0: 8, C1: 0.5, C2: 0.1}
	obs := map[int]policy.Seconds{}
	for _, w := range []int{1, 2, 4, 8} {
		obs[w] = truth.StepTime(w)
	}
	s := FitSpeed(obs)
	for _, w := range []int{1, 3, 16} {
		if math.Abs(s.StepTime(w)-truth.StepTime(w)) > 1e-6 {
			t.Fatalf("T(%d) = %g, want %g (fit %+v)", w, s.StepTime(w), truth.StepTime(w), s)
		}
	}
	one := FitSpeed(map[int]policy.Seconds{2: 1})
	if math.Abs(one.StepTime(2)-1) > 1e-12 || math.Abs(one.StepTime(4)-(0.45+0.1)) > 1e-12 {
		t.Errorf("one-point prior: T(2)=%g T(4)=%g", one.StepTime(2), one.StepTime(4))
	}
	if none := FitSpeed(nil); none.StepTime(4) != 0.25 {
		t.Errorf("no data: T(4) = %g", none.StepTime(4))
	}
}
