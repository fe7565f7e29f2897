package serve

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	lim := Limits{MaxInput: 8, MaxOutput: 4, Vocab: 10}
	good, err := DecodeRequestBytes([]byte(`{"id":"a","tokens":[1,2,3],"max_tokens":2,"deadline_ms":50}`), lim)
	if err != nil || good.InputLen != 3 || good.MaxTokens != 2 || good.DeadlineMS != 50 {
		t.Fatalf("good request: %+v, %v", good, err)
	}
	bad := map[string]string{
		`{"tokens":[1,2,3,4,5,6,7,8,9]}`:            "field tokens",
		`{"tokens":[10]}`:                           "field tokens",
		`{"tokens":[-1]}`:                           "field tokens",
		`{"input_len":9}`:                           "field input_len",
		`{"input_len":2,"tokens":[1]}`:              "field input_len",
		`{"max_tokens":5}`:                          "field max_tokens",
		`{"deadline_ms":-1}`:                        "field deadline_ms",
		`{"deadline_ms":99999999}`:                  "field deadline_ms",
		`{"id":"` + strings.Repeat("x", 129) + `"}`: "field id",
		`{"prompt":"hi"}`:                           "unknown field",
		`{"max_tokens":"2"}`:                        "malformed JSON",
		`{"max_tokens":2}{}`:                        "trailing data",
		`{"max_tokens":2`:                           "malformed JSON",
		``:                                          "malformed JSON",
		`[]`:                                        "malformed JSON",
	}
	for in, want := range bad {
		_, err := DecodeRequestBytes([]byte(in), lim)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", in, err, want)
		}
	}
	var fe *FieldError
	if _, err := DecodeRequestBytes([]byte(`{"max_tokens":5}`), lim); !errors.As(err, &fe) || fe.Field != "max_tokens" {
		t.Errorf("want a FieldError naming max_tokens, got %v", err)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"tokens":[1,2,3],"max_tokens":2,"deadline_ms":50}`))
	f.Add([]byte(`{"input_len":4096,"max_tokens":1024}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{}
		r, err := DecodeRequestBytes(b, lim)
		if err != nil {
			return
		}
		lim = lim.withDefaults()
		if r.InputLen < 0 || r.InputLen > lim.MaxInput || r.MaxTokens < 0 || r.MaxTokens > lim.MaxOutput || r.DeadlineMS < 0 {
			t.Fatalf("accepted out-of-range request %+v", r)
		}
		if len(r.Tokens) > 0 && r.InputLen != len(r.Tokens) {
			t.Fatalf("input_len %d != %d tokens", r.InputLen, len(r.Tokens))
		}
	})
}
