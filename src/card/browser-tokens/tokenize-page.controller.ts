import { Controller, Get, Header, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { TokenizePageQuery } from './card-tokenization.dto.js';
import { CardTokenizationService } from './card-tokenization.service.js';
import { TOKENIZE_PAGE_CSS, TOKENIZE_PAGE_JS, tokenizePageHtml } from './tokenize-page.assets.js';

/**
 * The embeddable tokenisation page (a browser page, not API: outside the spec). Its CSP lets the
 * script reach the provider's token endpoint only, frame only an issuer's 3-D Secure challenge (https,
 * or the sandbox's pages), and lets only the declared origin frame it.
 */
@ApiExcludeController()
@Controller('card')
export class TokenizePageController {
  constructor(private readonly tokenization: CardTokenizationService) {}

  @Get('tokenize')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('referrer-policy', 'no-referrer')
  @Header('x-content-type-options', 'nosniff')
  tokenizePage(
    @Query() query: TokenizePageQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): string {
    const tokenizationUrl = this.tokenization.tokenizationUrl();
    reply.header(
      'content-security-policy',
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src ${new URL(tokenizationUrl).origin}; frame-src ${this.tokenization.challengeSources()}; form-action 'none'; frame-ancestors ${query.origin}; base-uri 'none'`,
    );
    return tokenizePageHtml({ tokenizationUrl, publicKey: query.publicKey, origin: query.origin });
  }

  @Get('tokenize.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  @Header('x-content-type-options', 'nosniff')
  tokenizeScript(): string {
    return TOKENIZE_PAGE_JS;
  }

  @Get('tokenize.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'no-cache')
  @Header('x-content-type-options', 'nosniff')
  tokenizeStyle(): string {
    return TOKENIZE_PAGE_CSS;
  }
}
