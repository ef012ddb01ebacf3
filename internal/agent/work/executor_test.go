package work

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestWhoAppliesAndRemoves(t *testing.T) {
	const restricted = "system:serviceaccount:open-cluster-management-agent:flotilla-work"
	plain := &workv1.ManifestWork{}
	withExecutor := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{Executor: &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type: workv1.ExecutorSubjectTypeServiceAccount, ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: "team-a", Name: "deployer"}}}}}
	type who struct{ Apply, Remove string }
	for name, tc := range map[string]struct {
		defaultUser string
		work        *workv1.ManifestWork
		want        who
	}{
		// OCM's mode: the agent ("") applies works without an executor and removes every work's objects.
		"OCM, no executor":        {work: plain, want: who{Apply: "", Remove: ""}},
		"OCM, an executor":        {work: withExecutor, want: who{Apply: "system:serviceaccount:team-a:deployer", Remove: ""}},
		"restricted, no executor": {defaultUser: restricted, work: plain, want: who{Apply: restricted, Remove: restricted}},
		"restricted, an executor": {defaultUser: restricted, work: withExecutor,
			want: who{Apply: "system:serviceaccount:team-a:deployer", Remove: "system:serviceaccount:team-a:deployer"}},
	} {
		t.Run(name, func(t *testing.T) {
			a := &applier{defaultUser: tc.defaultUser}
			if diff := cmp.Diff(tc.want, who{a.applyUser(tc.work), a.removeUser(tc.work)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceAccountUser(t *testing.T) {
	for name, tc := range map[string]struct {
		user string
		ok   bool
	}{
		"a ServiceAccount": {user: "system:serviceaccount:open-cluster-management-agent:flotilla-work", ok: true},
		"a user":           {user: "alice"},
		"no name":          {user: "system:serviceaccount:ns:"},
		"no namespace":     {user: "system:serviceaccount::name"},
		"extra colon":      {user: "system:serviceaccount:ns:a:b"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := serviceAccountUser(tc.user); ok != tc.ok {
				t.Errorf("serviceAccountUser(%q) ok = %v, want %v", tc.user, ok, tc.ok)
			}
		})
	}
}
