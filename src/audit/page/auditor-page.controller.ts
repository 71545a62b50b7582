import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AUDITOR_PAGE_CSS, AUDITOR_PAGE_HTML, AUDITOR_PAGE_JS } from './auditor-page.assets.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** The auditor's web page (a browser page, not API: outside the spec). Data comes from /v1/audit. */
@ApiExcludeController()
@Controller('audit')
export class AuditorPageController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', CSP)
  @Header('cache-control', 'no-store')
  page(): string {
    return AUDITOR_PAGE_HTML;
  }

  @Get('page.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  script(): string {
    return AUDITOR_PAGE_JS;
  }

  @Get('page.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'no-cache')
  style(): string {
    return AUDITOR_PAGE_CSS;
  }
}
