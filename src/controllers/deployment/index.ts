export { descriptor, newDeploymentController, withDefaults, type DeploymentController } from './deployment-controller.js';
export * from './types.js';
export * from './annotations.js';
export * from './conditions.js';
export * from './replica-sets.js';
export * from './rolling-math.js';
export { proportionalScale, type ProportionalPlan, type ScaleTarget } from './proportional.js';
