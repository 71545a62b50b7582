/** Printable text: no control characters. Used by free-text fields so that both validation and the spec restrict them. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const PRINTABLE_TEXT = /^[^\u0000-\u001F\u007F]*$/;
export const PRINTABLE_TEXT_SOURCE = '^[^\\u0000-\\u001F\\u007F]*$';
