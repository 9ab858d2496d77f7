package provider

// Holds the module requirements until the generators below use the types; removed with them.

import (
	_ "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/v1alpha1"
	_ "github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure/v1alpha1"
	_ "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/v1alpha1"
	_ "github.com/gardener/gardener-extension-provider-openstack/pkg/apis/openstack/v1alpha1"
	_ "k8s.io/apiserver/pkg/apis/apiserver/validation"
	_ "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
)
