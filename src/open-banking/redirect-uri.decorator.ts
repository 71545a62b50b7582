import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUrl, Matches, MaxLength } from 'class-validator';
import { IsOmittable } from '../platform/common/omittable.js';

const URL_OPTIONS = {
  protocols: ['https', 'http'],
  require_protocol: true,
  require_tld: false,
  allow_underscores: true,
};
const HTTPS_OR_LOCAL = '^(https://|http://(localhost|127\\.0\\.0\\.1)(:[0-9]+)?(/|$))[^\\s]*$';

/** An address of the app the user's browser is sent back to: https, or http on localhost for development. */
export function AppRedirectUri(options: {
  required: boolean;
  description: string;
  example: string;
}): PropertyDecorator {
  const doc = {
    description: options.description,
    example: options.example,
    format: 'uri',
    maxLength: 2000,
    pattern: HTTPS_OR_LOCAL,
  };
  return applyDecorators(
    options.required ? ApiProperty(doc) : ApiPropertyOptional(doc),
    ...(options.required ? [] : [IsOmittable()]),
    IsUrl(URL_OPTIONS, { message: '$property must be an absolute http(s) URL' }),
    MaxLength(2000),
    Matches(new RegExp(HTTPS_OR_LOCAL), {
      message: '$property must use https (http only on localhost or 127.0.0.1)',
    }),
  );
}
