package live

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// fakeVars serves Nomad's Variables HTTP API as the real server does for
// what the store uses: GET, PUT with ?cas= (409 with the conflicting
// Variable), DELETE, and the prefix list; it refuses items over 64 KiB with
// Nomad's own message (nomad/structs/variables.go).
type fakeVars struct {
	mu    sync.Mutex
	index uint64
	vars  map[string]*api.Variable
	// before runs ahead of each request, outside the lock; a non-nil
	// error fails the request with a 500.
	before func(method, path string) error
}

const fakeMaxVariableSize = 65536

var fakeValidPath = regexp.MustCompile("^[a-zA-Z0-9-_~/]{1,128}$")

func newFakeVars(t *testing.T) (*fakeVars, *api.Client) {
	t.Helper()
	f := &fakeVars{index: 10, vars: map[string]*api.Variable{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeVars) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, isVar := strings.CutPrefix(r.URL.Path, "/v1/var/")
	f.mu.Lock()
	before := f.before
	f.mu.Unlock()
	if before != nil {
		if err := before(r.Method, path); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/vars" && r.Method == http.MethodGet:
		f.list(w, r.URL.Query().Get("prefix"))
	case isVar && r.Method == http.MethodGet:
		v := f.vars[path]
		if v == nil {
			http.Error(w, "variable not found", http.StatusNotFound)
			return
		}
		f.reply(w, http.StatusOK, v)
	case isVar && r.Method == http.MethodPut:
		f.put(w, r, path)
	case isVar && r.Method == http.MethodDelete:
		delete(f.vars, path)
		f.index++
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "fake: unsupported "+r.Method+" "+r.URL.Path, http.StatusNotImplemented)
	}
}

func (f *fakeVars) put(w http.ResponseWriter, r *http.Request, path string) {
	var in api.Variable
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(in.Items) == 0 {
		http.Error(w, "variable missing required Items object", http.StatusBadRequest)
		return
	}
	size := 0
	for k, v := range in.Items {
		size += len(k) + len(v)
	}
	if size > fakeMaxVariableSize {
		// As Nomad 1.11.3 answers (checked against a real server).
		http.Error(w, "RPC Error:: 400,variables are limited to 64KiB in total size", http.StatusBadRequest)
		return
	}
	if !fakeValidPath.MatchString(path) {
		http.Error(w, "invalid path \""+path+"\"", http.StatusInternalServerError)
		return
	}
	old := f.vars[path]
	if cq := r.URL.Query().Get("cas"); cq != "" {
		ci, err := strconv.ParseUint(cq, 10, 64)
		if err != nil {
			http.Error(w, "can not parse cas", http.StatusBadRequest)
			return
		}
		switch {
		case ci == 0 && old != nil:
			f.reply(w, http.StatusConflict, old)
			return
		case ci != 0 && old == nil:
			f.reply(w, http.StatusConflict, &api.Variable{Namespace: "default", Path: path})
			return
		case old != nil && ci != old.ModifyIndex:
			f.reply(w, http.StatusConflict, old)
			return
		}
	}
	f.index++
	v := &api.Variable{Namespace: "default", Path: path, Items: in.Items, CreateIndex: f.index, ModifyIndex: f.index}
	if old != nil {
		v.CreateIndex = old.CreateIndex
	}
	f.vars[path] = v
	f.reply(w, http.StatusOK, v)
}

func (f *fakeVars) list(w http.ResponseWriter, prefix string) {
	out := []*api.VariableMetadata{}
	for p, v := range f.vars {
		if strings.HasPrefix(p, prefix) {
			out = append(out, v.Metadata())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	f.reply(w, http.StatusOK, out)
}

func (f *fakeVars) reply(w http.ResponseWriter, code int, body any) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(f.index, 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// paths lists the stored Variables under prefix.
func (f *fakeVars) paths(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p := range f.vars {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (f *fakeVars) setBefore(fn func(method, path string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = fn
}

func (f *fakeVars) get(path string) *api.Variable {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vars[path]
}

func (f *fakeVars) set(path string, items map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.vars[path] = &api.Variable{Namespace: "default", Path: path, Items: items, CreateIndex: f.index, ModifyIndex: f.index}
}
