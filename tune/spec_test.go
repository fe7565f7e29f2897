package tune

import (
	"strings"
	"testing"
)

const goodSpec = `
tune "digits" {
  job       = "tune-digits"
  metric    = "loss"
  algorithm = "asha"
  trials    = 9
  seed      = 7
  budget {
    min = 50
    max = 450
  }
  param "lr" {
    type = "log_uniform"
    min  = 0.001
    max  = 0.5
  }
  param "batch" {
    type   = "choice"
    values = [16, 32, 64]
  }
  param "width" {
    type = "int"
    min  = 16
    max  = 128
  }
}
`

func TestParseSpecDefaults(t *testing.T) {
	s, err := ParseSpec("spec.hcl", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "digits" || s.Mode != "min" || s.Budget.Reduction != 3 || s.Budget.Unit != "steps" {
		t.Fatalf("defaults not applied: %+v", s)
	}
	if len(s.Params) != 3 || s.Params[1].Values[2] != "64" {
		t.Fatalf("params: %+v", s.Params)
	}
}

func TestParseSpecErrorsNameTheField(t *testing.T) {
	cases := map[string]struct{ from, to, field string }{
		"unknown algorithm": {`algorithm = "asha"`, `algorithm = "bayes"`, "algorithm"},
		"negative budget":   {`max = 450`, `max = -5`, "budget.max"},
		"min above max":     {`min = 50`, `min = 5000`, "budget.min"},
		"reduction":         {`max = 450`, "max = 450\n reduction = 1", "budget.reduction"},
		"negative total":    {`max = 450`, "max = 450\n total = -1", "budget.total"},
		"mode":              {`metric    = "loss"`, "metric = \"loss\"\n mode = \"lowest\"", "mode"},
		"no metric":         {`metric    = "loss"`, `metric = ""`, "metric"},
		"no trials":         {`trials    = 9`, `trials = 0`, "trials"},
		"param type":        {`type   = "choice"`, `type = "normal"`, "param.batch"},
		"empty choice":      {`values = [16, 32, 64]`, `values = []`, "param.batch"},
		"log of zero":       {`min  = 0.001`, `min = 0`, "param.lr"},
		"int not whole":     {`min  = 16`, `min = 16.5`, "param.width"},
		"syntax":            {`trials    = 9`, `trials = = 9`, "spec.hcl:"},
		"missing metric":    {`metric    = "loss"`, ``, "metric"},
		"relative ckpt":     {`trials    = 9`, "trials = 9\n checkpoint = \"ckpt\"", "checkpoint"},
		"batch not a param": {`trials    = 9`, "trials = 9\n batch_param = \"bs\"", "batch_param"},
		"batch of floats":   {`trials    = 9`, "trials = 9\n batch_param = \"lr\"", "batch_param"},
		"batch value":       {`values = [16, 32, 64]`, "values = [16, 32.5]", "batch_param"},
	}
	for name, c := range cases {
		src := strings.Replace(goodSpec, c.from, c.to, 1)
		if strings.HasPrefix(name, "batch value") {
			src = strings.Replace(src, `trials    = 9`, "trials = 9\n batch_param = \"batch\"", 1)
		}
		_, err := ParseSpec("spec.hcl", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v does not name %q", name, err, c.field)
		}
	}
}

func TestParseSpecEmptySpace(t *testing.T) {
	src := `tune "x" {
  metric = "loss"
  algorithm = "random"
  trials = 2
  budget { max = 10 }
}`
	_, err := ParseSpec("s.hcl", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "param: the search space is empty") {
		t.Fatalf("got %v", err)
	}
}

func TestSampleIsSeededAndInRange(t *testing.T) {
	s, err := ParseSpec("spec.hcl", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewTuner(*s)
	b, _ := NewTuner(*s)
	for i := range a.Trials {
		ca, cb := a.Trials[i].Config, b.Trials[i].Config
		for k := range ca {
			if ca[k] != cb[k] {
				t.Fatalf("trial %d %s: %s vs %s with the same seed", i, k, ca[k], cb[k])
			}
		}
		lr := mustFloat(t, ca["lr"])
		w := mustFloat(t, ca["width"])
		if lr < 0.000999 || lr > 0.5001 || w < 16 || w > 128 || w != float64(int(w)) {
			t.Fatalf("trial %d out of range: %v", i, ca)
		}
		if !contains([]string{"16", "32", "64"}, ca["batch"]) {
			t.Fatalf("batch %q not a choice", ca["batch"])
		}
	}
	s.Seed++
	c, _ := NewTuner(*s)
	if c.Trials[0].Config["lr"] == a.Trials[0].Config["lr"] {
		t.Fatal("another seed drew the same learning rate")
	}
}

func TestGridEnumerates(t *testing.T) {
	src := `tune "g" {
  metric = "loss"
  algorithm = "grid"
  budget { max = 10 }
  param "opt" {
    type = "choice"
    values = ["sgd", "adam"]
  }
  param "depth" {
    type = "int"
    min = 1
    max = 3
  }
  param "lr" {
    type = "log_uniform"
    min = 0.01
    max = 1
    points = 1
  }
}`
	s, err := ParseSpec("g.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tu, err := NewTuner(*s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range tu.Trials {
		got = append(got, tr.Config["opt"]+tr.Config["depth"]+"@"+tr.Config["lr"])
	}
	want := "sgd1@0.1 sgd2@0.1 sgd3@0.1 adam1@0.1 adam2@0.1 adam3@0.1"
	if strings.Join(got, " ") != want {
		t.Fatalf("grid = %v, want %s", got, want)
	}
}
