/**
 * kcm/api: helpers on plain Kubernetes objects: label and field selectors,
 * resource quantities, int-or-string values, metadata.
 */
export {
  parseSelector,
  selectorFromSet,
  selectorFromLabelSelector,
  labelSelectorAsString,
  labelSelectorIsEmpty,
  everything,
  nothing,
  SelectorParseError,
  type Selector,
  type Labels,
  type LabelSelectorValue,
  type Requirement,
  type Operator,
} from '../api/labels.js';
export { parseFieldSelector, fieldSelectorFromSet, oneTermEqualSelector, FieldSelectorParseError, type FieldSelector, type Fields } from '../api/fields.js';
export {
  parseQuantity,
  quantityToString,
  canonicalQuantity,
  milliValue,
  value as quantityValue,
  compare as compareQuantities,
  add as addQuantities,
  sub as subtractQuantities,
  isValidQuantity,
  QuantityParseError,
  type Quantity,
  type QuantityLike,
  type QuantityFormat,
} from '../api/quantity.js';
export { getScaledValueFromIntOrPercent, getIntOrPercentValue, intOrStringToString, type IntOrString } from '../api/intstr.js';
export { getControllerOf, isControlledBy, newControllerRef, objectReference } from '../api/meta.js';
export { deepEqual } from '../api/equality.js';
