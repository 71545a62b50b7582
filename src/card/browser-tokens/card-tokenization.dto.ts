import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { PUBLIC_KEY_PATTERN } from '#src/access/merchant-credentials/card-credentials.dto.js';

/** An origin as a browser states it: scheme, host and port, nothing after. */
export const ORIGIN_PATTERN = '^https?://[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$';

/** What a payer's browser needs to make a card token itself, with the tenant's public key. */
export class CardTokenizationConfig {
  @ApiProperty({
    description:
      "The tenant's public key at the card provider (`pk_`): public by design, made to be embedded in browser code. It can only create and read card tokens.",
    pattern: PUBLIC_KEY_PATTERN,
    maxLength: 253,
    example: 'pk_live_TYooMQauvdEDq54NiTphI7jx',
  })
  publicKey: string;

  @ApiProperty({
    description:
      "The provider's token endpoint: `POST` the five card fields form-encoded (`card_number`, `expiration_month`, `expiration_year`, `holder_name`, `cvv`) with HTTP Basic auth (the public key as user name, empty password); the answer's `token` is the `ctn_` to pay with. It answers cross-origin requests.",
    format: 'uri',
    maxLength: 2048,
    example: 'https://api.provider.example/tokens',
  })
  tokenizationUrl: string;

  @ApiProperty({
    description:
      "Portico's tokenisation page, to embed in an iframe: add `publicKey` and `origin` (your page's origin) as query arguments. It sends your page `postMessage({ type: 'portico.cardFormReady' })` first, once its form is ready; the card is sent from it straight to the provider and the token comes back to your page by `postMessage` (`{ type: 'portico.cardToken', token, card }`, or `portico.cardTokenError` with `code` and `message`).",
    format: 'uri',
    maxLength: 2048,
    example: 'https://portico.example.com/card/tokenize',
  })
  pageUrl: string;
}

/** The query of Portico's tokenisation page. */
export class TokenizePageQuery {
  @IsString()
  @Matches(new RegExp(PUBLIC_KEY_PATTERN), { message: 'publicKey must be a pk_ key' })
  publicKey: string;

  @IsString()
  @Matches(new RegExp(ORIGIN_PATTERN), {
    message: 'origin must be the embedding page origin (https://host[:port])',
  })
  origin: string;
}
