package lifecycle

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func seed(name, provider, region string, ready bool) gardencorev1beta1.Seed {
	status := gardencorev1beta1.ConditionTrue
	if !ready {
		status = gardencorev1beta1.ConditionUnknown
	}
	return gardencorev1beta1.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"seed.gardener.cloud/region": region}},
		Spec: gardencorev1beta1.SeedSpec{
			Provider: gardencorev1beta1.SeedProvider{Type: provider, Region: region},
			Settings: &gardencorev1beta1.SeedSettings{Scheduling: &gardencorev1beta1.SeedSettingScheduling{Visible: true}},
		},
		Status: gardencorev1beta1.SeedStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded},
			Conditions:    []gardencorev1beta1.Condition{{Type: gardencorev1beta1.GardenletReady, Status: status}},
		},
	}
}

func TestDetermineSeed(t *testing.T) {
	regionSelector := &gardencorev1beta1.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"seed.gardener.cloud/region": "eu-central-1"}}}
	tests := []struct {
		name     string                          // case name
		seeds    []gardencorev1beta1.Seed        // the garden's seeds
		selector *gardencorev1beta1.SeedSelector // the shoot's seedSelector
		want     string                          // chosen seed, empty if none
		err      string                          // scheduler message if none
	}{
		{
			name:  "same region preferred",
			seeds: []gardencorev1beta1.Seed{seed("aws-eu-west-1", "aws", "eu-west-1", true), seed("aws-eu-central-1", "aws", "eu-central-1", true)},
			want:  "aws-eu-central-1",
		},
		{
			name:  "another region of the provider without a selector",
			seeds: []gardencorev1beta1.Seed{seed("aws-eu-west-1", "aws", "eu-west-1", true), seed("aws-eu-central-1", "aws", "eu-central-1", false)},
			want:  "aws-eu-west-1",
		},
		{
			name:     "a selector on an unready region matches nothing",
			seeds:    []gardencorev1beta1.Seed{seed("aws-eu-west-1", "aws", "eu-west-1", true), seed("aws-eu-central-1", "aws", "eu-central-1", false), seed("gcp-eu-central-1", "gcp", "eu-central-1", false)},
			selector: regionSelector,
			err:      "none out of the 1 seeds has the matching labels required by seed selector of 'Shoot' (selector: 'seed.gardener.cloud/region=eu-central-1')",
		},
		{
			name:  "no ready seed at all",
			seeds: []gardencorev1beta1.Seed{seed("aws-eu-central-1", "aws", "eu-central-1", false)},
			err:   "none of the 1 seeds is valid for scheduling (not deleting, visible and ready)",
		},
		{
			name:  "no seed of the provider",
			seeds: []gardencorev1beta1.Seed{seed("gcp-eu-central-1", "gcp", "eu-central-1", true)},
			err:   `none out of the 1 seeds has a matching provider for "aws"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shoot := &gardencorev1beta1.Shoot{Spec: gardencorev1beta1.ShootSpec{Region: "eu-central-1", Provider: gardencorev1beta1.Provider{Type: "aws"}, SeedSelector: tc.selector}}
			got, err := determineSeed(shoot, tc.seeds, nil)
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Errorf("error = %v, want %q", err, tc.err)
			case tc.err == "" && (err != nil || got.Name != tc.want):
				t.Errorf("seed = %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	quota := Verdict{Outcome: OutcomeError, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}}
	transient := Verdict{Outcome: OutcomeError, Codes: []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorRetryableInfraDependencies}}
	longAgo := &metav1.Time{Time: now.Add(-13 * time.Hour)}
	tests := []struct {
		name  string       // case name
		v     Verdict      // how the operation ends
		start *metav1.Time // retry cycle start
		want  Outcome      // resulting outcome
	}{
		{name: "retryable code is retried", v: transient, want: OutcomeError},
		{name: "non-retryable code fails", v: quota, want: OutcomeFailed},
		{name: "an expired retry cycle fails", v: transient, start: longAgo, want: OutcomeFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := shootWith(create, processing, 1, 1)
			s.Status.RetryCycleStartTime = tc.start
			if got := willRetry(s, tc.v, now, 12*time.Hour).Outcome; got != tc.want {
				t.Errorf("outcome = %s, want %s", got, tc.want)
			}
		})
	}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: 16 * time.Second} {
		if got := retryBackoff(0, time.Second, 16*time.Second, n); got != want {
			t.Errorf("backoff after %d errors = %v, want %v", n, got, want)
		}
	}
	if got := retryBackoff(500*time.Millisecond, time.Second, time.Minute, 5); got != 500*time.Millisecond {
		t.Errorf("explicit backoff = %v", got)
	}
}
