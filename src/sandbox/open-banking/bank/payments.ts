import { randomUUID } from 'node:crypto';
import { type BankContext } from './bank-state.js';
import { fail, tppErrors } from './errors.js';
import { type Payment, type TransactionStatus } from './payment-model.js';
import { productRuleViolations, resolveProduct, type ResolvedProduct } from './product-rules.js';
import { type Brand } from './brands.js';
import {
  createdHeaders,
  href,
  openAuthorisation,
  redirectUris,
  requireBrand,
} from './request-context.js';
import { type BankRequest, type BankResponse } from './types.js';

/** Payment initiation (PIS): single credit transfers checked against the product rules. */

/** The path's product: unknown is 404 PRODUCT_UNKNOWN, known but not offered by the brand 403 PRODUCT_INVALID. */
function pathProduct(context: BankContext, request: BankRequest, brand: Brand): ResolvedProduct {
  const resolved = resolveProduct(context.productRules, request.params.paymentProduct ?? '');
  if (!resolved) fail(404, 'PRODUCT_UNKNOWN', 'Unknown payment product', 'paymentProduct');
  if (brand.productsNotOffered.includes(resolved.product))
    fail(
      403,
      'PRODUCT_INVALID',
      `${brand.brandName} does not offer ${resolved.product}`,
      'paymentProduct',
    );
  return resolved;
}

function paymentPath(payment: Payment): string {
  return `/${payment.brandId}/bg/v1/payments/${payment.productInPath}/${payment.paymentId}`;
}

function paymentLinks(payment: Payment): Record<string, { href: string }> {
  const self = paymentPath(payment);
  return { self: href(self), status: href(`${self}/status`) };
}

export function initiatePayment(context: BankContext, request: BankRequest): BankResponse {
  const brand = requireBrand(request);
  const { product, rule } = pathProduct(context, request, brand);
  const uris = redirectUris(request);
  const violations = productRuleViolations(rule, request.body);
  if (violations.length > 0) return tppErrors(400, violations);
  const paymentId = `pay-${randomUUID()}`;
  const { authorisationId, scaRedirect } = openAuthorisation(context, brand.brandId, {
    kind: 'payment',
    paymentId,
  });
  const payment: Payment = {
    paymentId,
    brandId: brand.brandId,
    tppId: request.tppId,
    product,
    productInPath: request.params.paymentProduct ?? product,
    details: structuredClone(request.body as Record<string, unknown>),
    status: 'RCVD',
    statusHistory: ['RCVD'],
    ...uris,
    authorisationId,
  };
  context.state.payments.set(paymentId, payment);
  return {
    status: 201,
    headers: createdHeaders(paymentPath(payment)),
    body: {
      transactionStatus: 'RCVD',
      paymentId,
      _links: { scaRedirect: href(scaRedirect), ...paymentLinks(payment) },
    },
  };
}

/** The payment of the path, if it exists under this brand and product (either spelling) for this TPP. */
function ownedPayment(context: BankContext, request: BankRequest): Payment {
  const { product } = pathProduct(context, request, requireBrand(request));
  const payment = context.state.payments.get(request.params.paymentId ?? '');
  if (
    !payment ||
    payment.brandId !== request.params.brandId ||
    payment.product !== product ||
    payment.tppId !== request.tppId
  ) {
    fail(404, 'RESOURCE_UNKNOWN', 'Payment is not known', 'paymentId');
  }
  return payment;
}

/**
 * control.actOnPayment: the bank changes a payment outside the TPP (its back office settles or rejects
 * it, corrects its amount) or loses it (`forget`). False when the payment is unknown.
 */
export function actOnPayment(
  context: BankContext,
  paymentId: string,
  change: { status?: TransactionStatus; amount?: string } | 'forget',
): boolean {
  const payment = context.state.payments.get(paymentId);
  if (!payment) return false;
  if (change === 'forget') return context.state.payments.delete(paymentId);
  if (change.status && change.status !== payment.status) {
    payment.status = change.status;
    payment.statusHistory = [...payment.statusHistory, change.status];
  }
  if (change.amount !== undefined) {
    const instructed = payment.details.instructedAmount as Record<string, unknown>;
    payment.details = {
      ...payment.details,
      instructedAmount: { ...instructed, amount: change.amount },
    };
  }
  return true;
}

export function getPayment(context: BankContext, request: BankRequest): BankResponse {
  const payment = ownedPayment(context, request);
  return {
    status: 200,
    body: {
      transactionStatus: payment.status,
      paymentId: payment.paymentId,
      paymentDetails: structuredClone(payment.details),
      _links: paymentLinks(payment),
    },
  };
}

export function getPaymentStatus(context: BankContext, request: BankRequest): BankResponse {
  return { status: 200, body: { transactionStatus: ownedPayment(context, request).status } };
}
