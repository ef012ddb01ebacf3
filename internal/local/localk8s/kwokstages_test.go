package localk8s

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sampleStages = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  delay:
    durationMilliseconds: 1000
    jitterDurationMilliseconds: 5000
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  delay:
    durationMilliseconds: 1000
    durationFrom:
      expressionFrom: '.metadata.annotations["pod-complete.stage.kwok.x-k8s.io/delay"]'
    jitterDurationMilliseconds: 5000
    jitterDurationFrom:
      expressionFrom: '.metadata.annotations["pod-complete.stage.kwok.x-k8s.io/jitter-delay"]'
`

func TestKwokStages(t *testing.T) {
	got, err := KwokStages([]byte(sampleStages))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(sampleStages, "    jitterDurationMilliseconds: 5000\n    jitterDurationFrom:", "    jitterDurationFrom:", 1)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if _, err := KwokStages([]byte("kind: Stage\nmetadata:\n  name: pod-ready\n")); err == nil {
		t.Error("stages without pod-complete: no error")
	}
}
