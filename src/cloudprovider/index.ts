export type { CloudProvider, LoadBalancer, LoadBalancerStatus, InstancesV2, InstanceMetadata, Zones, Zone, Routes, Route } from './cloud.js';
export { InstanceNotFoundError, defaultLoadBalancerName } from './cloud.js';
export { registerCloudProvider, initCloudProvider, validateCloudProviderName, isExternalCloudProvider, cloudProviderNames, UnknownCloudProviderError, EXTERNAL_CLOUD_PROVIDER, type CloudConfig, type CloudProviderFactory } from './registry.js';
export { newLocalCloud, localCloudOptions, LOCAL_PROVIDER_NAME, INSTANCE_ANNOTATION, DEFAULT_LB_IP_RANGE } from './local/local-cloud.js';
